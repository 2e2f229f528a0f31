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

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/**
 * A hostile peer: speaks the control protocol over a plain socket with {@link FrameWriter} (or raw
 * bytes), and, once admitted, opens data channels with a loopback transport of its own so that it can
 * push data behind its announcements. Nothing in it checks what it sends.
 *
 * <p>Not thread-safe.
 */
final class HostileClient implements AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();

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
        this(target.host(), target.port());
    }

    HostileClient(String host, int port) throws IOException {
        socket = new Socket(host, port);
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

    /**
     * The next frame within {@code timeout}, keep-alives (PING) skipped; null at end of stream (the engine
     * dropped us).
     */
    ControlFrame next(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        byte[] buf = new byte[64 * 1024];
        while (true) {
            ControlFrame f = reader.next();
            if (f instanceof ControlFrame.Ping) {
                continue;
            }
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

    /** Sends HELLO as {@code name} with a fresh random nonce; returns the nonce. */
    byte[] hello(String name) throws IOException {
        byte[] nonce = new byte[ControlFrame.NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        writer.hello(name, 1234, nonce, 1, 0);
        flush();
        return nonce;
    }

    /** The next frame, which must be the engine's CHALLENGE. */
    ControlFrame.Challenge challenge() throws IOException {
        ControlFrame c = next(Duration.ofSeconds(10));
        if (!(c instanceof ControlFrame.Challenge challenge)) {
            throw new AssertionError("expected CHALLENGE, got " + c);
        }
        return challenge;
    }

    /**
     * The handshake's proof, computed here from the protocol's definition (not with the engine's code):
     * HMAC-SHA256 keyed with the acceptor's secret over label, dialer nonce, acceptor nonce, dialer name
     * and acceptor name, each preceded by its length as a big-endian u32.
     */
    static byte[] proof(byte[] secret, String label, byte[] dialerNonce, byte[] acceptorNonce, String dialer,
                        String acceptor) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            for (byte[] f : new byte[][] {label.getBytes(StandardCharsets.UTF_8), dialerNonce, acceptorNonce,
                    dialer.getBytes(StandardCharsets.UTF_8), acceptor.getBytes(StandardCharsets.UTF_8)}) {
                mac.update(ByteBuffer.allocate(4).putInt(f.length).array());
                mac.update(f);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    /** HELLO, CHALLENGE, then PROOF computed with {@code secret}; returns HELLO_OK's follower, the engine's HANDLES. */
    ControlFrame.Handles admit(String name, byte[] secret) throws IOException {
        byte[] nonce = hello(name);
        ControlFrame.Challenge c = challenge();
        writer.proof(proof(secret, "tcpx4j dialer", nonce, c.nonce(), name, c.name()));
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

    /** Splits a recorded control stream into its frames, each with its length prefix. */
    static List<byte[]> frames(byte[] stream) {
        List<byte[]> frames = new ArrayList<>();
        ByteBuffer b = ByteBuffer.wrap(stream);
        while (b.remaining() >= 4) {
            int len = b.getInt(b.position());
            if (len < 1 || b.remaining() < 4 + len) {
                break;
            }
            byte[] f = new byte[4 + len];
            b.get(f);
            frames.add(f);
        }
        return frames;
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
