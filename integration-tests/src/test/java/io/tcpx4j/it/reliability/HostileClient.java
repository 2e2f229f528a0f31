package io.tcpx4j.it.reliability;

import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameReader;
import io.tcpx4j.domain.protocol.FrameWriter;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * A hostile peer: speaks the control protocol over a plain socket with {@link FrameWriter} (or raw
 * bytes), and, once admitted, opens data channels with a loopback transport of its own so that it can
 * push data behind its announcements. Nothing in it checks what it sends.
 *
 * <p>Not thread-safe.
 */
final class HostileClient implements AutoCloseable {

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final FrameReader reader = new FrameReader();
    final FrameWriter writer = new FrameWriter();
    private LoopbackTransport transport;
    private Listener listener;
    SendComm send;
    RecvComm recv;

    HostileClient(ConnInfo target) throws IOException {
        socket = new Socket(target.host(), target.port());
        socket.setTcpNoDelay(true);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    /** Flushes what {@link #writer} holds. */
    HostileClient flush() throws IOException {
        ByteBuffer p = writer.pending();
        byte[] b = new byte[p.remaining()];
        p.get(b);
        writer.compact();
        out.write(b);
        out.flush();
        return this;
    }

    HostileClient raw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** The next frame within {@code timeout}; null at end of stream (the engine dropped us). */
    ControlFrame next(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        byte[] buf = new byte[64 * 1024];
        while (true) {
            ControlFrame f = reader.next();
            if (f != null) {
                return f;
            }
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new SocketTimeoutException("no frame within " + timeout);
            }
            socket.setSoTimeout((int) Math.max(1, left));
            int n;
            try {
                n = in.read(buf);
            } catch (SocketException e) {
                return null; // reset by the engine: dropped as well
            }
            if (n < 0) {
                return null;
            }
            reader.feed(Arrays.copyOf(buf, n));
        }
    }

    /** Whether the engine closes the stream within {@code timeout} (frames before the close are skipped). */
    boolean droppedWithin(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                if (next(Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()))) == null) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        }
        return false;
    }

    /** HELLO with {@code secret}; returns HELLO_OK's follower, the engine's HANDLES. */
    ControlFrame.Handles admit(String name, byte[] secret) throws IOException {
        writer.hello(name, 1234, secret, 1);
        flush();
        ControlFrame ok = next(Duration.ofSeconds(10));
        if (!(ok instanceof ControlFrame.HelloOk)) {
            throw new AssertionError("expected HELLO_OK, got " + ok);
        }
        ControlFrame h = next(Duration.ofSeconds(10));
        if (!(h instanceof ControlFrame.Handles handles)) {
            throw new AssertionError("expected HANDLES, got " + h);
        }
        return handles;
    }

    /** Opens the one data channel both ways, as an honest engine would. */
    void openDataChannel(ControlFrame.Handles theirs) throws IOException {
        transport = new LoopbackTransport(LoopbackConfig.defaults());
        listener = transport.listen(0);
        writer.handles(new byte[][] {listener.handle()});
        flush();
        send = poll(() -> transport.connect(0, theirs.handles()[0]));
        recv = poll(() -> transport.accept(listener));
        transport.closeListen(listener);
        listener = null;
    }

    /** Sends {@code len} bytes from {@code address} as one message on the data channel and waits for it. */
    void sendData(long address, int len) {
        MemoryRegistration mr = transport.register(send, address, Math.max(len, 1), PtrType.HOST);
        try {
            NetRequest r = poll(() -> transport.isend(send, address, len, 0, mr));
            poll(() -> transport.test(r) ? Boolean.TRUE : null);
        } finally {
            transport.deregister(send, mr);
        }
    }

    private static <T> T poll(Supplier<T> attempt) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            T t = attempt.get();
            if (t != null) {
                return t;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("data channel did not make progress in 10 s");
            }
            Thread.onSpinWait();
        }
    }

    @Override
    public void close() throws IOException {
        try {
            socket.close();
        } finally {
            if (transport != null) {
                transport.close(); // closes its comms and listener
            }
        }
    }
}
