package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * A connect in progress: opens the handle's number of sockets without blocking, sends each a hello and
 * waits for the listener's verdict. {@code connect} polls {@link #comm} and {@link #failure}.
 *
 * <p>Thread-safe for those two volatile fields; everything else is <b>confined to the loop thread</b>.
 */
final class PendingConnect {

    private final CommSupport support;
    private final Loop loop;
    private final HandleCodec.Handle handle;
    private final long connectionId;
    private final SocketChannel[] channels;
    private final SelectionKey[] keys;
    private int acked;
    volatile LoopbackSendComm comm;
    volatile TransferException failure;
    /** The failure's message without the code prefix, for rethrowing on the caller's thread. */
    volatile String failureMessage;

    PendingConnect(CommSupport support, Loop loop, HandleCodec.Handle handle, long connectionId) {
        this.support = support;
        this.loop = loop;
        this.handle = handle;
        this.connectionId = connectionId;
        this.channels = new SocketChannel[handle.sockets()];
        this.keys = new SelectionKey[handle.sockets()];
    }

    /** Runs a step on this connect's loop. */
    void loopExecute(Runnable step) {
        if (!loop.execute(step)) {
            failureMessage = "transport is closed";
            failure = new TransferException(TransferException.Code.INVALID_PARAM, failureMessage);
        }
    }

    /** Caller thread: a loop without I/O threads moves the connect on now. */
    void progress() {
        loop.poll();
    }

    /** Loop thread. */
    void start() {
        try {
            for (int i = 0; i < channels.length; i++) {
                SocketChannel ch = SocketChannel.open();
                channels[i] = ch;
                Sockets.configure(ch);
                Step step = new Step(i);
                keys[i] = loop.register(ch, SelectionKey.OP_CONNECT, step);
                if (ch.connect(handle.address())) {
                    step.connected();
                }
            }
        } catch (IOException | RuntimeException e) {
            fail(TransferException.Code.REMOTE_DISCONNECT, "cannot connect to " + handle.address() + ": " + e, e);
        }
    }

    /** Closes whatever is open; the caller has given up or the transport closes. Loop thread. */
    void abandon() {
        if (comm == null && failure == null) {
            fail(TransferException.Code.CANCELED, "connect abandoned", null);
        }
    }

    private void fail(TransferException.Code code, String message, Throwable cause) {
        if (failure != null || comm != null) {
            return;
        }
        for (SocketChannel ch : channels) {
            if (ch != null) {
                Sockets.closeQuietly(ch); // giving up on this connection anyway
            }
        }
        failureMessage = message;
        failure = new TransferException(code, message, cause);
        loop.signal();
        loop.release();
    }

    /** Handshake of socket {@code index}. */
    private final class Step implements Loop.Handler {
        private final int index;
        private final ByteBuffer ack = ByteBuffer.allocate(1);

        Step(int index) {
            this.index = index;
        }

        void connected() throws IOException {
            ByteBuffer hello = ByteBuffer.allocate(HandleCodec.HELLO_BYTES);
            hello.putInt(HandleCodec.MAGIC).put(handle.nonce()).putLong(connectionId)
                    .putShort((short) index).putShort((short) channels.length).flip();
            channels[index].write(hello);
            if (hello.hasRemaining()) {
                // 32 bytes into a fresh socket's empty buffer cannot be partial; if it is, the socket is sick
                throw new IOException("hello not sent in one write");
            }
            keys[index].interestOps(SelectionKey.OP_READ);
        }

        @Override
        public void ready(SelectionKey key) {
            if (failure != null) {
                return;
            }
            SocketChannel ch = channels[index];
            try {
                if (key.isConnectable()) {
                    ch.finishConnect();
                    connected();
                    return;
                }
                if (key.isReadable()) {
                    int n = ch.read(ack);
                    if (n < 0) {
                        fail(TransferException.Code.REMOTE_DISCONNECT,
                                "listener at " + handle.address() + " closed the connection during set-up", null);
                        return;
                    }
                    if (ack.hasRemaining()) {
                        return;
                    }
                    if (ack.get(0) != 1) {
                        fail(TransferException.Code.INVALID_PARAM, "listener at " + handle.address()
                                + " rejected the handle: wrong nonce (a stale or forged handle)", null);
                        return;
                    }
                    key.interestOps(0);
                    if (++acked == channels.length) {
                        LoopbackSendComm c = new LoopbackSendComm(support, loop, channels.length);
                        c.attach(channels, keys);
                        comm = c;
                        loop.signal();
                    }
                }
            } catch (IOException e) {
                fail(TransferException.Code.REMOTE_DISCONNECT, "cannot connect to " + handle.address() + ": " + e, e);
            }
        }

        @Override
        public void crashed(RuntimeException e) {
            fail(TransferException.Code.BACKEND, "connect failed: " + e, e);
        }
    }
}
