package io.tcpx4j.domain.control;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.idle.IdleSelector;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameReader;
import io.tcpx4j.domain.protocol.FrameWriter;
import io.tcpx4j.domain.protocol.RefusalCode;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The ordered control stream of a connection: a non-blocking TCP socket (no Nagle delay: frames are
 * small and latency-bound) with a frame reader and a frame writer, in plain TCP or, when the engine is
 * configured with {@link EngineConfig#controlTls()}, in TLS ({@link TlsChannel}). A dialer checks the
 * acceptor's certificate against its context's trust and the host of the conn-info it dialed.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
public final class ControlStream {

    /** Fills one {@link #readFrames} takes at most. */
    private static final int READ_BUDGET = 8;
    /** Longest a connection with chunks in flight goes without reading its control socket (no poll). */
    private static final long READ_INTERVAL_NANOS = 20_000;

    private final SocketChannel sock;
    /** TLS over {@link #sock}, or null for plain TCP. */
    private final TlsChannel tls;
    /** What frames are read from and written to: {@link #sock} or {@link #tls}. */
    private final ByteChannel channel;
    private final FrameReader reader = new FrameReader();
    private SelectionKey key;
    /** The agent's poll, or a driver's wait, found the socket ready since {@link #readDue} last asked. */
    private boolean readable;
    /** When {@link #readDue} last said yes. */
    private long lastRead;
    /** The last {@link #readFrames} stopped at its budget: bytes may wait in the socket or the TLS session. */
    private boolean readAgain;
    /** Frames queued for the peer; {@link #flush()} writes what the socket takes. */
    public final FrameWriter writer = new FrameWriter();

    private ControlStream(SocketChannel sock, SSLEngine engine) throws IOException {
        this.sock = sock;
        sock.configureBlocking(false);
        sock.setOption(StandardSocketOptions.TCP_NODELAY, true);
        this.tls = engine == null ? null : new TlsChannel(sock, engine);
        this.channel = tls == null ? sock : tls;
    }

    /**
     * Starts connecting to {@code address}, in TLS when {@code config} says so; {@link #finishConnect()}
     * tells when the socket is connected.
     */
    public static ControlStream dial(InetSocketAddress address, EngineConfig config) throws IOException {
        SocketChannel s = SocketChannel.open();
        try {
            SSLEngine engine = null;
            if (config.controlTls() != null) {
                engine = config.controlTls().createSSLEngine(address.getHostString(), address.getPort());
                engine.setUseClientMode(true);
                SSLParameters p = engine.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the dialed host
                engine.setSSLParameters(p);
            }
            ControlStream c = new ControlStream(s, engine);
            s.connect(address);
            return c;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** Wraps an accepted socket, in TLS when {@code config} says so. */
    public static ControlStream accepted(SocketChannel s, EngineConfig config) throws IOException {
        SSLContext context = config.controlTls();
        SSLEngine engine = null;
        if (context != null) {
            engine = context.createSSLEngine();
            engine.setUseClientMode(false);
            engine.setNeedClientAuth(config.controlTlsClientAuth());
        }
        return new ControlStream(s, engine);
    }

    /** Whether nothing is queued for the peer or read but not yet handed to the frame reader. */
    public boolean settled() {
        return writer.isEmpty() && (tls == null || tls.settled());
    }

    /** Lets an idle agent wake, and its poll learn, when this stream can connect or has data to read. */
    public void watch(IdleSelector readiness) {
        key = readiness.watch(sock, sock.isConnectionPending() ? SelectionKey.OP_CONNECT : SelectionKey.OP_READ,
                () -> readable = true);
    }

    /**
     * Whether to read the control socket now: when a driver's wait or the agent's poll
     * ({@link IdleSelector#poll()}) found it ready since the last call. Otherwise, {@code polled}: as the poll says (the last read stopped at its
     * budget: the selector reports a socket for as long as it holds bytes, and a read that ended on no
     * bytes left none in the TLS session either); without a poll, at most every
     * {@link #READ_INTERVAL_NANOS} while chunks are in flight, and on every call while {@code waiting} for a
     * frame: one read is the cheapest poll of one socket and delivers its bytes in the same call.
     */
    public boolean readDue(long now, boolean polled, boolean waiting) {
        boolean due = readable || (polled ? readAgain : waiting || now - lastRead >= READ_INTERVAL_NANOS);
        readable = false;
        if (due) {
            lastRead = now;
        }
        return due;
    }

    /**
     * Reads what the socket has, at most {@link #READ_BUDGET} fills (one chatty peer cannot hold the
     * agent), and hands every complete frame to {@code handler} until the stream is closed (a connection
     * that ends closes its stream). Plain TCP stops at a fill that left room in the buffer: the socket
     * had nothing more queued, and a second read would cost a system call to learn it (a transfer's
     * frame usually arrives in one read). Returns the fills that brought bytes, or -1 at end of stream;
     * a malformed frame throws as {@link #next} does, naming {@code peer}.
     */
    public int readFrames(Supplier<Object> peer, Consumer<ControlFrame> handler) throws IOException {
        readAgain = false;
        int fills = 0;
        while (fills < READ_BUDGET && sock.isOpen()) {
            int n = fill();
            if (n < 0) {
                return -1;
            }
            if (n == 0) {
                break;
            }
            fills++;
            ControlFrame f;
            while (sock.isOpen() && (f = next(peer.get())) != null) {
                handler.accept(f);
            }
            if (tls == null && reader.drained()) {
                break;
            }
        }
        readAgain = fills == READ_BUDGET;
        return fills;
    }

    public boolean finishConnect() throws IOException {
        if (!sock.finishConnect()) {
            return false;
        }
        if (key != null && key.isValid()) {
            key.interestOps(SelectionKey.OP_READ);
        }
        return true;
    }

    /** Largest frame accepted from the peer. */
    public void maxFrame(int bytes) {
        reader.maxFrame(bytes);
    }

    /** Reads what the socket has; bytes read, 0 if none, -1 at end of stream. */
    int fill() throws IOException {
        try {
            return reader.fill(channel);
        } catch (SSLException e) {
            if (tls.plainPeer() && !tls.clientMode()) {
                // a plain-TCP peer cannot read TLS: tell it in its own framing why it is dropped
                FrameWriter plain = new FrameWriter();
                plain.reject(RefusalCode.NOT_SUPPORTED, "this engine's control stream requires TLS");
                sock.write(plain.pending());
            }
            throw e;
        }
    }

    /**
     * The next complete frame read, or null. A malformed frame means a peer that speaks garbage, which
     * is treated like one that went away: REMOTE_DISCONNECT naming {@code peer}.
     */
    ControlFrame next(Object peer) {
        try {
            return reader.next();
        } catch (TransferException e) {
            throw new TransferException(TransferException.Code.REMOTE_DISCONNECT,
                    "protocol error from " + peer + ": " + e.getMessage(), e);
        }
    }

    /** Writes what the socket takes of the queued frames; returns the bytes written. */
    public int flush() throws IOException {
        if (writer.isEmpty()) {
            if (tls != null) {
                tls.flushNet(); // handshake records and close_notify queued behind a full socket
            }
            return 0;
        }
        ByteBuffer p = writer.pending();
        try {
            return channel.write(p);
        } finally {
            writer.compact();
        }
    }

    /** Writes what it can of the queued frames, ignoring errors: the peer learns from the close instead. */
    public void flushQuietly() {
        try {
            flush();
        } catch (IOException ignored) {
            // the peer sees EOF instead
        }
    }

    public void close() {
        if (tls != null && sock.isOpen()) {
            tls.closeQuietly();
        }
        try {
            sock.close();
        } catch (IOException ignored) {
            // nothing left to do with a socket that will not close
        }
    }

    /** The peer's address, for messages. */
    public Object remoteAddress() {
        try {
            return sock.getRemoteAddress();
        } catch (IOException e) {
            return "?";
        }
    }
}
