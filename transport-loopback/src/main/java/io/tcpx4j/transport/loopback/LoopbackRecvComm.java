package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.RecvComm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * Receiving half of a channel. A socket reads only while a receive is posted for the message it is
 * at, so an unposted message waits in the kernel (TCP back-pressure), as in TCPX.
 *
 * <p>Bounce receives: the 4 KiB block k of the message lands in page {@code pages[k]} of the comm's
 * pool; a partial last block is placed at the end of its page so that fragment offsets are not all
 * page aligned. Fragment k is written when its block is mapped, so every block has exactly one record.
 *
 * <p><b>Not thread-safe</b> (see {@link LoopbackComm}).
 */
final class LoopbackRecvComm extends LoopbackComm implements RecvComm {

    private static final long TABLE_BYTES = (long) NetRequest.MAX_FRAGMENTS * NetRequest.FRAGMENT_BYTES;

    private BouncePool pool;
    private MemoryDescriptor poolMemory;
    private MemoryDescriptor tables;

    LoopbackRecvComm(CommSupport support, Loop loop, int sockets) {
        super(support, loop, sockets);
    }

    @Override
    Stream newStream(int index, SocketChannel channel, SelectionKey key) {
        return new RecvStream(this, index, channel, key);
    }

    /**
     * Caller thread: gives a bounce receive its pages and fragment table; false if the pool is short
     * (BUSY). The pool is allocated at the first bounce receive, from pinned memory on GPU hosts so
     * that the CUDA unpack kernel reads it directly.
     */
    boolean assignPages(LoopbackRequest r, int size) {
        if (pool == null) {
            int pages = support.config().bouncePagesPerComm();
            poolMemory = support.allocateHost((long) pages * BouncePool.PAGE);
            tables = support.allocateHost(TABLE_BYTES * ring.length);
            pool = new BouncePool(poolMemory.address(), pages);
        }
        int need = (int) (((long) size + BouncePool.PAGE - 1) / BouncePool.PAGE);
        if (r.pages == null) {
            r.pages = new int[NetRequest.MAX_FRAGMENTS];
        }
        if (!pool.acquire(need, r.pages)) {
            return false;
        }
        r.pageCount = need;
        r.pool = pool;
        r.fragmentTable = tables.address() + TABLE_BYTES * r.slot;
        return true;
    }

    /** Caller thread, at consume. */
    void releasePages(LoopbackRequest r) {
        if (r.bounce) {
            pool.release(r.pages, r.pageCount);
            r.pageCount = 0;
        }
    }

    @Override
    void freeResources() {
        if (poolMemory != null) {
            support.freeHost(poolMemory);
            support.freeHost(tables);
            poolMemory = null;
            tables = null;
        }
    }

    /** One socket. <b>Confined to the loop thread.</b> */
    private static final class RecvStream extends Stream {
        private static final int IDLE = 0;
        private static final int HEADER = 1;
        private static final int PAYLOAD = 2;
        /** Pages mapped per scattering read: 32 x 4 KiB = 128 KiB per system call. */
        private static final int BATCH = 32;

        private final ByteBuffer header = ByteBuffer.allocateDirect(8);
        private final ByteBuffer[] views = new ByteBuffer[BATCH];
        private int phase = IDLE;
        private LoopbackRequest req;
        private long nextOffset;
        private long stripeEnd;
        private int first;
        private int count;

        RecvStream(LoopbackRecvComm comm, int index, SocketChannel channel, SelectionKey key) {
            super(comm, index, channel, key);
            for (int i = 0; i < BATCH; i++) {
                views[i] = NativeMemory.newView();
            }
        }

        @Override
        void start() {
            interest(0);
        }

        @Override
        boolean midMessage() {
            return phase != IDLE;
        }

        @Override
        public void ready(SelectionKey key) {
            blocked = false;
            pump();
        }

        @Override
        void pump() {
            while (true) {
                if (phase == IDLE) {
                    if (cursor >= comm.posted) {
                        interest(0);
                        return;
                    }
                    req = comm.request(cursor);
                    header.clear();
                    phase = HEADER;
                }
                if (phase == HEADER) {
                    int n = read(header);
                    if (n < 0) {
                        return;
                    }
                    if (header.hasRemaining()) {
                        waitForData();
                        return;
                    }
                    if (!startPayload()) {
                        return;
                    }
                }
                if (first == count) {
                    if (nextOffset >= stripeEnd) {
                        phase = IDLE;
                        LoopbackRequest r = req;
                        req = null;
                        cursor++;
                        r.stripeDone();
                        continue;
                    }
                    mapBatch();
                }
                long n;
                try {
                    n = channel.read(views, first, count - first);
                } catch (IOException e) {
                    comm.fail(TransferException.Code.REMOTE_DISCONNECT, "connection to the sender broke: " + e, e);
                    return;
                }
                if (n < 0) {
                    eof();
                    return;
                }
                while (first < count && !views[first].hasRemaining()) {
                    first++;
                }
                if (n == 0) {
                    waitForData();
                    return;
                }
            }
        }

        private boolean startPayload() {
            int seq = header.getInt(0);
            int size = header.getInt(4);
            if (seq != (int) req.seq) {
                comm.fail(TransferException.Code.BACKEND,
                        "protocol error: socket " + index + " carries message " + seq + ", expected " + (int) req.seq, null);
                return false;
            }
            if (size < 0 || size > req.size) {
                comm.fail(TransferException.Code.BACKEND,
                        "the sender posted " + size + " bytes against a receive of " + req.size, null);
                return false;
            }
            req.received = size;
            int sockets = comm.streams.length;
            nextOffset = stripeStart(size, index, sockets);
            stripeEnd = stripeEnd(size, index, sockets);
            first = 0;
            count = 0;
            phase = PAYLOAD;
            return true;
        }

        /** Points the views at the next part of the stripe: one view in place, up to BATCH bounce pages. */
        private void mapBatch() {
            first = 0;
            count = 0;
            LoopbackRequest r = req;
            if (!r.bounce) {
                NativeMemory.retarget(views[0], r.address + nextOffset, (int) (stripeEnd - nextOffset));
                nextOffset = stripeEnd;
                count = 1;
                return;
            }
            long base = r.pool.base;
            while (count < BATCH && nextOffset < stripeEnd) {
                int block = (int) (nextOffset / BouncePool.PAGE);
                int len = (int) Math.min(BouncePool.PAGE, stripeEnd - nextOffset);
                long srcOff = (long) r.pages[block] * BouncePool.PAGE + (BouncePool.PAGE - len);
                long rec = r.fragmentTable + (long) block * NetRequest.FRAGMENT_BYTES;
                NativeMemory.putInt(rec, (int) srcOff);
                NativeMemory.putInt(rec + 4, len);
                NativeMemory.putLong(rec + 8, nextOffset);
                NativeMemory.retarget(views[count++], base + srcOff, len);
                nextOffset += len;
            }
        }

        private int read(ByteBuffer b) {
            try {
                int n = channel.read(b);
                if (n < 0) {
                    eof();
                }
                return n;
            } catch (IOException e) {
                comm.fail(TransferException.Code.REMOTE_DISCONNECT, "connection to the sender broke: " + e, e);
                return -1;
            }
        }

        private void eof() {
            comm.fail(TransferException.Code.REMOTE_DISCONNECT, "the sender closed the connection", null);
        }

        private void waitForData() {
            blocked = true;
            interest(SelectionKey.OP_READ);
        }
    }
}
