package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The out-of-band connection of a two-host run: plain TCP carrying one JSON {@link OobMessage} per
 * line. It exists because engines exchange conn-info and region metadata out of band by design; it
 * carries the target engine's connection secret, so listen only on a network you trust.
 *
 * <p><b>Not thread-safe</b>, except {@link #close()}, which may be called from any thread to unblock a
 * reader.
 */
final class OobChannel implements AutoCloseable {

    /** Longest accepted line; real messages are well under 1 KiB. */
    static final int MAX_LINE = 64 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    OobChannel(Socket socket) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Connects to a target, retrying refused connections until {@code patience} has passed. */
    static OobChannel connect(HostPort target, Duration patience) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            Socket s = new Socket();
            try {
                s.connect(target.toAddress(), 5_000);
                return new OobChannel(s);
            } catch (ConnectException | SocketTimeoutException e) {
                s.close();
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("no bench target at " + target + " (" + e.getMessage() + "): start"
                            + " 'tcpx4j serve --listen " + target + "' there first", e);
                }
                Thread.sleep(200);
            } catch (IOException e) {
                s.close();
                throw e;
            }
        }
    }

    InetAddress localAddress() {
        return socket.getLocalAddress();
    }

    String remote() {
        return String.valueOf(socket.getRemoteSocketAddress());
    }

    void send(OobMessage m) throws IOException {
        byte[] line = JSON.writeValueAsBytes(m);
        byte[] framed = new byte[line.length + 1];
        System.arraycopy(line, 0, framed, 0, line.length);
        framed[line.length] = '\n';
        out.write(framed);
        out.flush();
    }

    /** The next message; {@link EOFException} when the peer closed the connection. */
    OobMessage receive() throws IOException {
        byte[] buf = new byte[256];
        int n = 0;
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new EOFException("out-of-band connection to " + remote() + " closed");
            }
            if (c == '\n') {
                break;
            }
            if (n == MAX_LINE) {
                throw new IOException("out-of-band message longer than " + MAX_LINE + " bytes");
            }
            if (n == buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.min(MAX_LINE, n * 2));
            }
            buf[n++] = (byte) c;
        }
        try {
            OobMessage m = JSON.readValue(new String(buf, 0, n, StandardCharsets.UTF_8), OobMessage.class);
            if (m.op() == null) {
                throw new IOException("out-of-band message without op");
            }
            return m;
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new IOException("malformed out-of-band message: " + e.getOriginalMessage(), e);
        }
    }

    /** Sends {@code request} and returns the reply, which must be {@code expected}; an error reply throws. */
    OobMessage call(OobMessage request, String expected) throws IOException {
        send(request);
        OobMessage reply = receive();
        if (reply.is("error")) {
            throw new IOException("bench target " + remote() + ": " + reply.message());
        }
        if (!reply.is(expected)) {
            throw new IOException("bench target " + remote() + " answered '" + reply.op() + "' to '" + request.op()
                    + "', expected '" + expected + "'");
        }
        return reply;
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }
}
