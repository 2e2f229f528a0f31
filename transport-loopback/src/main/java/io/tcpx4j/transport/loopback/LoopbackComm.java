package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.NetTransport;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * What send and receive comms share: the socket streams on one I/O loop, the ring of 16 request
 * slots, failure and close.
 *
 * <p>Ring counters: {@code posted} (requests ever posted; volatile, the hand-off to the loop),
 * {@code tested} (requests that tested done: the FIFO head for {@code test} is slot
 * {@code tested % 16}), {@code released} (slots handed back: at test for sends, at consume for
 * receives). Slots in use are {@code posted - released}.
 *
 * <p><b>Not thread-safe</b>: the caller side is driven by one thread at a time (the SPI's rule); the
 * stream side is confined to the loop's thread (an I/O thread, or, without I/O threads, the driving
 * thread itself).
 */
abstract class LoopbackComm implements Comm, Loop.Pumpable {

    private static final System.Logger LOG = System.getLogger(LoopbackComm.class.getName());

    /** What the transport lends its comms; also how it tells its own comms from others. */
    final CommSupport support;
    final Loop loop;
    final Stream[] streams;
    final LoopbackRequest[] ring = new LoopbackRequest[NetTransport.MAX_REQUESTS];

    volatile long posted;
    long tested;
    long released;

    private volatile TransferException failure;
    private volatile String failureMessage;
    volatile boolean closed;
    private boolean channelsClosed;

    LoopbackComm(CommSupport support, Loop loop, int sockets) {
        this.support = support;
        this.loop = loop;
        this.streams = new Stream[sockets];
        for (int i = 0; i < ring.length; i++) {
            ring[i] = new LoopbackRequest(this, loop, i);
        }
    }

    /** Loop thread: takes over the connected sockets (keys already registered with the loop's selector). */
    final void attach(SocketChannel[] channels, SelectionKey[] keys) {
        for (int i = 0; i < streams.length; i++) {
            streams[i] = newStream(i, channels[i], keys[i]);
            keys[i].attach(streams[i]);
            streams[i].start();
        }
        loop.add(this);
    }

    abstract Stream newStream(int index, SocketChannel channel, SelectionKey key);

    final LoopbackRequest request(long seq) {
        return ring[(int) (seq & (NetTransport.MAX_REQUESTS - 1))];
    }

    final int inUse() {
        return (int) (posted - released);
    }

    /** Caller thread: throws if the comm cannot take new work. */
    final void checkUsable() {
        if (closed) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "comm is closed");
        }
        throwIfFailed();
    }

    final void throwIfFailed() {
        TransferException f = failure;
        if (f != null) {
            throw new TransferException(f.code(), failureMessage, f);
        }
    }

    /** Loop thread: the comm is dead; its pending and future requests fail with this. */
    final void fail(TransferException.Code code, String message, Throwable cause) {
        if (failure != null || channelsClosed) {
            return;
        }
        failureMessage = message;
        failure = new TransferException(code, message, cause);
        closeChannels(true);
        loop.signal();
    }

    @Override
    public final void pump() {
        for (Stream s : streams) {
            if (failure != null) {
                return;
            }
            if (!s.blocked) {
                s.pump();
            }
        }
    }

    /** The driving thread, on a loop without I/O threads. */
    @Override
    public final void pumpAll() {
        try {
            for (Stream s : streams) {
                if (failure != null || channelsClosed) {
                    return;
                }
                s.blocked = false;
                s.pump();
            }
        } catch (RuntimeException e) {
            crashed(e);
        }
    }

    @Override
    public final void crashed(RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "loopback comm I/O failed unexpectedly", e);
        fail(TransferException.Code.BACKEND, "internal error in the loopback transport: " + e, e);
    }

    /** Whether some posted request has not been fully moved by every socket (loop thread). */
    private boolean unfinished() {
        for (Stream s : streams) {
            if (s.cursor < posted || s.midMessage()) {
                return true;
            }
        }
        return false;
    }

    /** Loop thread. Abortive (RST) when data is still in flight, so the peer fails fast instead of waiting. */
    final void closeChannels(boolean abortive) {
        if (channelsClosed) {
            return;
        }
        channelsClosed = true;
        loop.remove(this);
        for (Stream s : streams) {
            if (s == null) {
                continue;
            }
            s.key.cancel();
            try {
                if (abortive) {
                    s.channel.setOption(StandardSocketOptions.SO_LINGER, 0);
                }
            } catch (IOException ignored) {
                // the socket is already broken; closing it is all that is left
            }
            try {
                s.channel.close();
            } catch (IOException ignored) {
                // as above
            }
        }
    }

    /**
     * Caller thread: closes the sockets on the loop and waits (bounded) until the loop no longer
     * touches the caller's memory, because the caller frees it next; a loop that does not answer in time
     * leaks the memory rather than corrupt it. Idempotent.
     */
    final void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (loop.runAndWait(() -> closeChannels(failure == null && unfinished()))) {
            freeResources();
            loop.release();
        } else {
            LOG.log(System.Logger.Level.WARNING, "loopback I/O loop did not release a closed comm in "
                    + IoLoop.WAIT_MILLIS + " ms; leaking its buffers");
        }
    }

    /** Caller thread, after the loop let go: frees native memory (bounce pages, staging). */
    abstract void freeResources();

    /** Part of a message of {@code size} bytes that socket {@code index} of {@code count} carries. */
    static long stripeStart(int size, int index, int count) {
        return Math.min(size, (long) index * stripe(size, count));
    }

    static long stripeEnd(int size, int index, int count) {
        return Math.min(size, (long) (index + 1) * stripe(size, count));
    }

    /** Stripes are whole 4 KiB pages (except the last), so a bounce page is only ever filled by one socket. */
    private static long stripe(int size, int count) {
        long part = ((long) size + count - 1) / count;
        return (part + BouncePool.PAGE - 1) & -(long) BouncePool.PAGE;
    }

    /** One socket of a comm. <b>Confined to the loop thread.</b> */
    abstract static class Stream implements Loop.Handler {
        final LoopbackComm comm;
        final int index;
        final SocketChannel channel;
        final SelectionKey key;
        /** Sequence number of the next message this socket moves. */
        long cursor;
        /** Waiting for socket readiness: the pump pass skips it until the key fires. */
        boolean blocked;
        private int interest = -1;

        Stream(LoopbackComm comm, int index, SocketChannel channel, SelectionKey key) {
            this.comm = comm;
            this.index = index;
            this.channel = channel;
            this.key = key;
        }

        abstract void start();

        abstract void pump();

        abstract boolean midMessage();

        final void interest(int ops) {
            if (ops != interest) {
                interest = ops;
                key.interestOps(ops);
            }
        }

        @Override
        public final void crashed(RuntimeException e) {
            comm.crashed(e);
        }
    }
}
