package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.SendComm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * Sending half of a channel. Each message goes out as, on every socket, an 8-byte header
 * {@code (u32 seq, u32 size)} followed by that socket's stripe of the payload.
 *
 * <p><b>Not thread-safe</b> (see {@link LoopbackComm}).
 */
final class LoopbackSendComm extends LoopbackComm implements SendComm {

    private final long dropAfterBytes;
    private long bytesOut;
    /** Pinned staging copies of CUDA sources, one per slot, grown on demand (GPU hosts only). */
    private final MemoryDescriptor[] staging = new MemoryDescriptor[ring.length];

    LoopbackSendComm(CommSupport support, Loop loop, int sockets) {
        super(support, loop, sockets);
        this.dropAfterBytes = support.config().faults().dropAfterBytes();
    }

    @Override
    Stream newStream(int index, SocketChannel channel, SelectionKey key) {
        return new SendStream(this, index, channel, key);
    }

    /**
     * Caller thread: starts the device-to-host copy of a CUDA source into the slot's pinned buffer.
     * Copies start at post time, so with a window of sends the copy of chunk k+1 runs while chunk k
     * is on the wire. {@code device} is the GPU that owns the source.
     */
    void stage(LoopbackRequest r, DeviceMemory memory, int device) {
        MemoryDescriptor buf = staging[r.slot];
        if (buf == null || buf.length() < r.size) {
            if (buf != null) {
                memory.free(buf);
            }
            buf = memory.allocatePinned(Math.max(r.size, BouncePool.PAGE));
            staging[r.slot] = buf;
        }
        r.source = buf.address();
        r.stagingTicket = r.size == 0 ? 0
                : memory.copyAsync(buf.slice(0, r.size), MemoryDescriptor.vram(r.address, r.size, device));
    }

    /**
     * Loop thread: whether the bytes to send are in host memory yet. The first socket to see the copy
     * done clears the ticket, so the comm's other sockets do not ask the GPU again.
     */
    private boolean sourceReady(LoopbackRequest r) {
        if (r.stagingTicket == 0) {
            return true;
        }
        if (!support.deviceMemory().isDone(r.stagingTicket)) {
            return false;
        }
        r.stagingTicket = 0;
        return true;
    }

    @Override
    void freeResources() {
        for (int i = 0; i < staging.length; i++) {
            if (staging[i] != null) {
                support.deviceMemory().free(staging[i]);
                staging[i] = null;
            }
        }
    }

    /** Loop thread: counts bytes for the drop-after-N fault; true if the connection was dropped. */
    private boolean wrote(long n) {
        bytesOut += n;
        if (dropAfterBytes >= 0 && bytesOut >= dropAfterBytes) {
            fail(TransferException.Code.REMOTE_DISCONNECT,
                    "fault injection: connection dropped after " + bytesOut + " bytes", null);
            return true;
        }
        return false;
    }

    /**
     * One socket. Writes the messages that are ready back to back in one gathering write (up to
     * {@link #BATCH}): one system call, one hold of the socket's lock and one push of its queue for
     * several chunks rather than one each. A partial write leaves the rest of the batch for when the
     * socket is writable again. <b>Confined to the loop thread.</b>
     */
    private static final class SendStream extends Stream {
        /** Most messages one write gathers. */
        static final int BATCH = 8;

        private final LoopbackSendComm send;
        private final ByteBuffer[] out = new ByteBuffer[2 * BATCH];
        private final ByteBuffer scratch = ByteBuffer.allocateDirect(16);
        /** Messages in the batch being written, and the first of them not yet fully written. */
        private int batched;
        private int first;

        SendStream(LoopbackSendComm comm, int index, SocketChannel channel, SelectionKey key) {
            super(comm, index, channel, key);
            this.send = comm;
            for (int i = 0; i < BATCH; i++) {
                out[2 * i] = ByteBuffer.allocateDirect(8);
                out[2 * i + 1] = NativeMemory.newView();
            }
        }

        @Override
        void start() {
            // Readable only ever means EOF or reset: the receiver never writes. Watching it is how an
            // idle send comm learns that its peer died.
            interest(SelectionKey.OP_READ);
        }

        @Override
        boolean midMessage() {
            return batched > 0;
        }

        @Override
        public void ready(SelectionKey key) {
            if (key.isReadable()) {
                int n;
                try {
                    scratch.clear();
                    n = channel.read(scratch);
                } catch (IOException e) {
                    comm.fail(TransferException.Code.REMOTE_DISCONNECT, "connection to the receiver broke: " + e, e);
                    return;
                }
                if (n < 0) {
                    comm.fail(TransferException.Code.REMOTE_DISCONNECT, "the receiver closed the connection", null);
                    return;
                }
                if (n > 0) {
                    comm.fail(TransferException.Code.BACKEND, "protocol error: the receiver sent data", null);
                    return;
                }
            }
            if (key.isValid() && key.isWritable()) {
                blocked = false;
                pump();
            }
        }

        @Override
        void pump() {
            while (true) {
                if (batched == 0 && !gather()) {
                    return;
                }
                long n;
                try {
                    n = channel.write(out, 2 * first, 2 * (batched - first));
                } catch (IOException e) {
                    comm.fail(TransferException.Code.REMOTE_DISCONNECT, "connection to the receiver broke: " + e, e);
                    return;
                }
                if (send.wrote(n)) {
                    return;
                }
                while (first < batched && !out[2 * first].hasRemaining() && !out[2 * first + 1].hasRemaining()) {
                    first++;
                    LoopbackRequest r = comm.request(cursor);
                    cursor++;
                    r.stripeDone();
                }
                if (first < batched) {
                    blocked = true;
                    interest(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                    return;
                }
                batched = 0;
            }
        }

        /**
         * Points the batch at the posted messages from the cursor on whose bytes are ready; false when
         * there are none (nothing posted, or the first still waits for its staging copy).
         */
        private boolean gather() {
            first = 0;
            int count = comm.streams.length;
            for (long seq = cursor; batched < BATCH && seq < comm.posted; seq++) {
                LoopbackRequest r = comm.request(seq);
                if (!send.sourceReady(r)) {
                    if (batched == 0) {
                        comm.loop.pollSoon(r.stagingTicket);
                        return false;
                    }
                    break;
                }
                long start = stripeStart(r.size, index, count);
                long end = stripeEnd(r.size, index, count);
                ByteBuffer header = out[2 * batched];
                header.clear();
                header.putInt(0, (int) r.seq).putInt(4, r.size);
                NativeMemory.retarget(out[2 * batched + 1], r.source + start, (int) (end - start));
                batched++;
            }
            if (batched == 0) {
                interest(SelectionKey.OP_READ);
                return false;
            }
            return true;
        }
    }
}
