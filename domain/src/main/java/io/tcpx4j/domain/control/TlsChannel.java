package io.tcpx4j.domain.control;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;

/**
 * TLS over a non-blocking socket with a JDK {@link SSLEngine}: {@link #read} and {@link #write} carry
 * plaintext and drive the TLS handshake as far as the socket allows, never blocking; until the handshake
 * is done they move no plaintext (0). A peer that opens with bytes that are not a TLS handshake record
 * (a plain-TCP tcpx4j peer starts with a frame length) is refused at once with an {@link SSLException}
 * that says so, and {@link #plainPeer()} tells it apart.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class TlsChannel implements ByteChannel {

    /** First byte of every TLS handshake record (content type 22). */
    private static final byte HANDSHAKE_RECORD = 0x16;
    /** Bound on engine steps per call, so that one call never spins. */
    private static final int MAX_STEPS = 64;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    private static final String HANDSHAKE_FAILED = "TLS handshake of the control stream failed: ";

    private final SocketChannel sock;
    private final SSLEngine engine;
    /** Bytes from the socket not yet unwrapped (write mode). */
    private ByteBuffer netIn;
    /** Wrapped bytes not yet written to the socket (read mode). */
    private ByteBuffer netOut;
    /** Plaintext not yet handed to the reader (read mode). */
    private ByteBuffer appIn;
    private boolean handshaken;
    private boolean firstByteSeen;
    private boolean plainPeer;

    TlsChannel(SocketChannel sock, SSLEngine engine) throws SSLException {
        this.sock = sock;
        this.engine = engine;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet);
        this.netOut = ByteBuffer.allocate(packet).flip();
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize()).flip();
        engine.beginHandshake();
    }

    /**
     * Whether nothing waits inside this channel (no bytes to write, none read but not handed on, no
     * handshake step to run): only then may an agent wait for the socket to become readable.
     */
    boolean settled() {
        HandshakeStatus hs = engine.getHandshakeStatus();
        return !netOut.hasRemaining() && !appIn.hasRemaining() && netIn.position() == 0
                && hs != HandshakeStatus.NEED_TASK && hs != HandshakeStatus.NEED_WRAP;
    }

    /** Whether the peer's first bytes were not TLS. */
    boolean plainPeer() {
        return plainPeer;
    }

    boolean clientMode() {
        return engine.getUseClientMode();
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        if (!appIn.hasRemaining() && drive() < 0 && !appIn.hasRemaining()) {
            return -1;
        }
        int n = Math.min(dst.remaining(), appIn.remaining());
        ByteBuffer part = appIn.duplicate();
        part.limit(part.position() + n);
        dst.put(part);
        appIn.position(appIn.position() + n);
        return n;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        if (!handshaken) {
            drive();
            if (!handshaken) {
                return 0;
            }
        }
        int before = src.remaining();
        for (int i = 0; i < MAX_STEPS && src.hasRemaining() && flushNet(); i++) {
            if (wrap(src).getStatus() == SSLEngineResult.Status.CLOSED) {
                throw new SSLException("TLS session of the control stream is closed");
            }
        }
        flushNet();
        return before - src.remaining();
    }

    /** Writes what the socket takes of the wrapped bytes; true when none is left. */
    boolean flushNet() throws IOException {
        while (netOut.hasRemaining()) {
            if (sock.write(netOut) == 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Sends close_notify (or the alert the engine prepared) if the socket takes it; nothing to a plain-TCP
     * peer, which would read a TLS record as a frame. The socket itself is the caller's to close.
     */
    void closeQuietly() {
        if (plainPeer) {
            return;
        }
        try {
            engine.closeOutbound();
            wrap(EMPTY);
            flushNet();
        } catch (IOException | RuntimeException ignored) {
            // the peer sees the socket close instead
        }
    }

    @Override
    public boolean isOpen() {
        return sock.isOpen();
    }

    @Override
    public void close() {
        closeQuietly();
    }

    /**
     * Runs the engine (handshake steps, then unwrapping) until plaintext is ready or the socket has
     * nothing more. Returns 1 if plaintext is ready, 0 if not yet, -1 once the peer closed.
     */
    private int drive() throws IOException {
        try {
            flushNet();
            for (int i = 0; i < MAX_STEPS && !appIn.hasRemaining(); i++) {
                HandshakeStatus hs = engine.getHandshakeStatus();
                int r;
                if (hs == HandshakeStatus.NEED_TASK) {
                    runTasks();
                    r = 1;
                } else if (hs == HandshakeStatus.NEED_WRAP) {
                    r = flushNet() && wrap(EMPTY).getStatus() != SSLEngineResult.Status.CLOSED && flushNet() ? 1 : 0;
                } else {
                    r = unwrap();
                }
                if (r < 0 && !handshaken) {
                    throw new SSLException("the peer closed the stream (does it use TLS on its control stream?)");
                }
                if (r <= 0) {
                    return r;
                }
            }
            return appIn.hasRemaining() ? 1 : 0;
        } catch (SSLException e) {
            closeQuietly(); // sends the alert the engine prepared, if any
            throw handshaken ? e : new SSLException(HANDSHAKE_FAILED + e.getMessage(), e);
        } catch (IOException e) {
            if (handshaken) {
                throw e;
            }
            throw new SSLException(HANDSHAKE_FAILED + e + " (does the peer use TLS on its control stream?)", e);
        }
    }

    /** One unwrap: 1 on progress, 0 if it needs bytes the socket does not have yet, -1 at end of stream. */
    private int unwrap() throws IOException {
        checkFirstByte();
        netIn.flip();
        appIn.compact();
        SSLEngineResult r;
        try {
            r = engine.unwrap(netIn, appIn);
        } finally {
            netIn.compact();
            appIn.flip();
        }
        if (r.getHandshakeStatus() == HandshakeStatus.FINISHED) {
            handshaken = true;
        }
        switch (r.getStatus()) {
            case OK:
                return 1;
            case BUFFER_UNDERFLOW:
                if (!netIn.hasRemaining()) {
                    netIn = grow(netIn, engine.getSession().getPacketBufferSize());
                }
                int n = sock.read(netIn);
                return n < 0 ? -1 : n == 0 ? 0 : 1;
            case BUFFER_OVERFLOW:
                appIn.compact();
                appIn = grow(appIn, engine.getSession().getApplicationBufferSize()).flip();
                return 1;
            default:
                return -1; // CLOSED: the peer sent close_notify
        }
    }

    /** A plain-TCP tcpx4j peer opens with a frame length, whose first byte is never a TLS record type. */
    private void checkFirstByte() throws SSLException {
        if (firstByteSeen || netIn.position() == 0) {
            return;
        }
        firstByteSeen = true;
        if (netIn.get(0) != HANDSHAKE_RECORD) {
            plainPeer = true;
            throw new SSLException(clientMode()
                    ? "the peer answered in plain TCP: its control stream does not use TLS, this engine's does"
                    : "the peer speaks plain TCP, this engine's control stream requires TLS");
        }
    }

    private SSLEngineResult wrap(ByteBuffer src) throws SSLException {
        netOut.compact();
        try {
            while (true) {
                SSLEngineResult r = engine.wrap(src, netOut);
                if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                    netOut = grow(netOut, engine.getSession().getPacketBufferSize());
                    continue;
                }
                if (r.getHandshakeStatus() == HandshakeStatus.FINISHED) {
                    handshaken = true;
                }
                return r;
            }
        } finally {
            netOut.flip();
        }
    }

    private void runTasks() {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run();
        }
    }

    /** A larger buffer (write mode) holding what {@code b} (write mode) holds. */
    private static ByteBuffer grow(ByteBuffer b, int atLeast) {
        ByteBuffer bigger = ByteBuffer.allocate(b.capacity() + Math.max(atLeast, b.capacity()));
        b.flip();
        bigger.put(b);
        return bigger;
    }
}
