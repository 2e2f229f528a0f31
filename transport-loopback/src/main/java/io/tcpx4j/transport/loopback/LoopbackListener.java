package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.Listener;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A listening socket. Every incoming socket first sends a 32-byte hello
 * {@code (u32 magic, 16 B nonce, u64 connection id, u16 index, u16 count)}; the listener answers one
 * byte, 1 to accept or 0 to reject (wrong nonce: a stale or forged handle), and groups accepted
 * sockets by connection id. A complete group becomes a receive comm that {@code accept} hands out.
 *
 * <p>Thread-safe: {@link #handle()} and {@link #poll()} from any thread; the rest on the loop thread.
 */
final class LoopbackListener implements Listener, Loop.Handler {

    private final CommSupport support;
    final Loop loop;
    private final ServerSocketChannel server;
    private final byte[] nonce;
    private final byte[] handle;
    private final ConcurrentLinkedQueue<LoopbackRecvComm> ready = new ConcurrentLinkedQueue<>();
    private final Map<Long, Group> groups = new HashMap<>();
    private final List<SocketChannel> handshaking = new ArrayList<>();
    volatile boolean closed;
    /** accept returned this listener's one comm (set by the accepting thread). */
    volatile boolean yielded;

    LoopbackListener(CommSupport support, Loop loop, ServerSocketChannel server, byte[] nonce, byte[] handle) {
        this.support = support;
        this.loop = loop;
        this.server = server;
        this.nonce = nonce;
        this.handle = handle;
    }

    @Override
    public byte[] handle() {
        return handle.clone();
    }

    /** The next complete connection, or null; a loop without I/O threads first reads what has arrived. */
    LoopbackRecvComm poll() {
        loop.poll();
        return ready.poll();
    }

    /** Loop thread. */
    void register() {
        try {
            loop.register(server, SelectionKey.OP_ACCEPT, this);
        } catch (IOException e) {
            closed = true;
        }
    }

    @Override
    public void ready(SelectionKey key) {
        while (true) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                return; // a connection that died in the backlog; the listener itself is fine
            }
            if (ch == null) {
                return;
            }
            try {
                Sockets.configure(ch);
                loop.register(ch, SelectionKey.OP_READ, new HelloReader(ch));
                handshaking.add(ch);
            } catch (IOException e) {
                Sockets.closeQuietly(ch);
            }
        }
    }

    @Override
    public void crashed(RuntimeException e) {
        System.getLogger(LoopbackListener.class.getName()).log(System.Logger.Level.ERROR, "listener failed", e);
        closeOnLoop();
    }

    /** Caller thread: closes on the loop and waits (bounded) for it. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        loop.runAndWait(this::closeOnLoop);
        // comms completed on the loop after its close task ran cannot exist: the loop did both in order
        for (LoopbackRecvComm c; (c = ready.poll()) != null; ) {
            c.close();
        }
        if (!yielded) {
            loop.release(); // a comm it yielded keeps the loop
        }
    }

    private void closeOnLoop() {
        closed = true;
        Sockets.closeQuietly(server);
        for (SocketChannel ch : handshaking) {
            Sockets.closeQuietly(ch);
        }
        handshaking.clear();
        for (Group g : groups.values()) {
            for (SocketChannel ch : g.channels) {
                if (ch != null) {
                    Sockets.closeQuietly(ch);
                }
            }
        }
        groups.clear();
    }

    /** Sockets of one connection arriving. */
    private static final class Group {
        final SocketChannel[] channels;
        final SelectionKey[] keys;
        int arrived;

        Group(int count) {
            channels = new SocketChannel[count];
            keys = new SelectionKey[count];
        }
    }

    /** Reads one socket's hello. <b>Confined to the loop thread.</b> */
    private final class HelloReader implements Loop.Handler {
        private final SocketChannel ch;
        private final ByteBuffer hello = ByteBuffer.allocate(HandleCodec.HELLO_BYTES);

        HelloReader(SocketChannel ch) {
            this.ch = ch;
        }

        @Override
        public void ready(SelectionKey key) {
            try {
                if (ch.read(hello) < 0) {
                    drop(key);
                    return;
                }
                if (hello.hasRemaining()) {
                    return;
                }
                hello.flip();
                int magic = hello.getInt();
                byte[] got = new byte[HandleCodec.NONCE_BYTES];
                hello.get(got);
                long connId = hello.getLong();
                int index = Short.toUnsignedInt(hello.getShort());
                int count = Short.toUnsignedInt(hello.getShort());
                Group g = groups.get(connId);
                boolean ok = !closed && magic == HandleCodec.MAGIC && MessageDigest.isEqual(got, nonce)
                        && count == support.config().socketsPerComm() && index < count
                        && (g == null || g.channels[index] == null);
                ch.write(ByteBuffer.wrap(new byte[] {(byte) (ok ? 1 : 0)}));
                if (!ok) {
                    drop(key);
                    return;
                }
                key.interestOps(0);
                key.attach(null);
                handshaking.remove(ch);
                if (g == null) {
                    g = new Group(count);
                    groups.put(connId, g);
                }
                g.channels[index] = ch;
                g.keys[index] = key;
                if (++g.arrived == count) {
                    groups.remove(connId);
                    LoopbackRecvComm comm = new LoopbackRecvComm(support, loop, count);
                    comm.attach(g.channels, g.keys);
                    ready.add(comm);
                    loop.signal();
                }
            } catch (IOException e) {
                drop(key);
            }
        }

        private void drop(SelectionKey key) {
            key.cancel();
            handshaking.remove(ch);
            Sockets.closeQuietly(ch);
        }

        @Override
        public void crashed(RuntimeException e) {
            handshaking.remove(ch);
            Sockets.closeQuietly(ch);
        }
    }

    static void checkDevice(int device, int devices) {
        if (device < 0 || device >= devices) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "device " + device + " out of range 0.." + (devices - 1));
        }
    }
}
