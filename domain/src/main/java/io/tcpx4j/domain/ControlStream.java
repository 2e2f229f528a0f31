package io.tcpx4j.domain;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameReader;
import io.tcpx4j.domain.protocol.FrameWriter;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * The ordered control stream of a connection: a non-blocking TCP socket (no Nagle delay: frames are
 * small and latency-bound) with a frame reader and a frame writer.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class ControlStream {

    private final SocketChannel sock;
    private final FrameReader reader = new FrameReader();
    private SelectionKey key;
    /** Frames queued for the peer; {@link #flush()} writes what the socket takes. */
    final FrameWriter writer = new FrameWriter();

    private ControlStream(SocketChannel sock) throws IOException {
        this.sock = sock;
        sock.configureBlocking(false);
        sock.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    /** Starts connecting to {@code address}; {@link #finishConnect()} tells when it is done. */
    static ControlStream dial(InetSocketAddress address) throws IOException {
        SocketChannel s = SocketChannel.open();
        try {
            ControlStream c = new ControlStream(s);
            s.connect(address);
            return c;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    static ControlStream accepted(SocketChannel s) throws IOException {
        return new ControlStream(s);
    }

    /** Lets an idle agent wake when this stream can connect or has data to read. */
    void watch(Readiness readiness) {
        key = readiness.watch(sock, sock.isConnectionPending() ? SelectionKey.OP_CONNECT : SelectionKey.OP_READ);
    }

    boolean finishConnect() throws IOException {
        if (!sock.finishConnect()) {
            return false;
        }
        if (key != null && key.isValid()) {
            key.interestOps(SelectionKey.OP_READ);
        }
        return true;
    }

    /** Largest frame accepted from the peer. */
    void maxFrame(int bytes) {
        reader.maxFrame(bytes);
    }

    /** Reads what the socket has; bytes read, 0 if none, -1 at end of stream. */
    int fill() throws IOException {
        return reader.fill(sock);
    }

    /** The next complete frame read, or null; a malformed frame throws {@link TransferException}. */
    ControlFrame next() {
        return reader.next();
    }

    /** Writes what the socket takes of the queued frames; returns the bytes written. */
    int flush() throws IOException {
        if (writer.isEmpty()) {
            return 0;
        }
        ByteBuffer p = writer.pending();
        try {
            return sock.write(p);
        } finally {
            writer.compact();
        }
    }

    /** Writes what it can of the queued frames, ignoring errors: the peer learns from the close instead. */
    void flushQuietly() {
        try {
            flush();
        } catch (IOException ignored) {
            // the peer sees EOF instead
        }
    }

    void close() {
        try {
            sock.close();
        } catch (IOException ignored) {
            // nothing left to do with a socket that will not close
        }
    }

    /** The peer's address, for messages. */
    Object remoteAddress() {
        try {
            return sock.getRemoteAddress();
        } catch (IOException e) {
            return "?";
        }
    }
}
