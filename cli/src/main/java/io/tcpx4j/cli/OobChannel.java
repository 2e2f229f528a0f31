package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.SequenceInputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The out-of-band connection of a two-host run: plain TCP carrying one JSON {@link OobMessage} per
 * line. It exists because engines exchange conn-info and region metadata out of band by design; it
 * carries the engines' conn-info, so listen only on a network you trust.
 *
 * <p>Every read has a deadline: {@link #receive(Duration)} fails when no complete message arrives in
 * time, however the bytes trickle in. A side that is busy (queued, filling, verifying, measuring a
 * row) keeps the other side's deadline from expiring with {@link #startPings(Duration, Duration)}; receivers
 * skip pings.
 *
 * <p><b>Not thread-safe</b>, except {@link #send}, which pings share with the owner's thread, and
 * {@link #close()}, which may be called from any thread to unblock a reader.
 */
final class OobChannel implements AutoCloseable {

    /** Longest accepted line; real messages are well under 1 KiB. */
    static final int MAX_LINE = 64 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    /** Times pings and watches for stuck writes; never writes itself, so it never blocks. */
    private static final ScheduledExecutorService PINGER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "tcpx4j-oob-ping");
        t.setDaemon(true);
        return t;
    });
    /** Writes the pings: a peer that stops reading blocks one of these threads, not the others' pings. */
    private static final java.util.concurrent.ExecutorService PING_WRITERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "tcpx4j-oob-ping-write");
        t.setDaemon(true);
        return t;
    });

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final String remote;
    private volatile ScheduledFuture<?> pings;
    private long pingMillis;
    /** {@link System#nanoTime()} when the write in progress began, 0 when none is. */
    private volatile long sendingSince;

    OobChannel(Socket socket) throws IOException {
        this(socket, new byte[0]);
    }

    /**
     * A connection of which {@code received} has been read already (by a target's {@link HelloGate}):
     * those bytes are read first.
     */
    OobChannel(Socket socket, byte[] received) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        this.remote = String.valueOf(socket.getRemoteSocketAddress());
        InputStream rest = socket.getInputStream();
        this.in = new BufferedInputStream(received.length == 0 ? rest
                : new SequenceInputStream(new ByteArrayInputStream(received), rest));
        this.out = socket.getOutputStream();
    }

    /**
     * The target turned this connection away before its run began: it is full, or it dropped the
     * connection before its welcome. A later connection may be served.
     */
    static final class TurnedAway extends IOException {
        TurnedAway(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** {@code target}'s address, resolved; a failure names the host as {@code --peer} gave it. */
    static InetSocketAddress resolve(HostPort target) throws java.net.UnknownHostException {
        InetSocketAddress a = target.toAddress();
        if (a.isUnresolved()) {
            throw new java.net.UnknownHostException("could not resolve " + target.host() + ", the host of --peer "
                    + target + " (no such host name, or no name service here)");
        }
        return a;
    }

    /**
     * Connects to a target, retrying refused connections until {@code patience} has passed; says so
     * once on {@code notices} when the first attempt is refused.
     */
    static OobChannel connect(HostPort target, Duration patience, PrintStream notices)
            throws IOException, InterruptedException {
        InetSocketAddress at = resolve(target);
        long deadline = System.nanoTime() + patience.toNanos();
        boolean told = false;
        while (true) {
            Socket s = new Socket();
            try {
                s.connect(at, 5_000);
                return new OobChannel(s);
            } catch (ConnectException | SocketTimeoutException e) {
                s.close();
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("no bench target at " + target + " (" + e.getMessage() + "): start"
                            + " 'tcpx4j serve --listen " + target + "' there first", e);
                }
                if (!told && notices != null) {
                    notices.println("tcpx4j: no bench target at " + target + " yet (" + e.getMessage()
                            + "); retrying for up to " + patience.toSeconds() + " s (--peer-wait)");
                    notices.flush();
                    told = true;
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
        return remote;
    }

    /** The peer's IP address (for further connections between the two). */
    InetAddress remoteAddress() {
        return socket.getInetAddress();
    }

    /** Sends one message. Safe to call while pings run. */
    synchronized void send(OobMessage m) throws IOException {
        byte[] line = JSON.writeValueAsBytes(m);
        byte[] framed = Arrays.copyOf(line, line.length + 1);
        framed[line.length] = '\n';
        sendingSince = System.nanoTime() | 1;
        try {
            out.write(framed);
            out.flush();
        } finally {
            sendingSince = 0;
        }
    }

    /**
     * Sends a ping every {@code interval} until {@link #close()}, so that the peer's deadline measures
     * whether this side is alive rather than how long its work takes; and closes the connection when
     * a write has been blocked for {@code writeTimeout} (a peer that stops reading), which fails the
     * blocked writer instead of leaving it hanging. A later call with a shorter interval (the peer's
     * timeout, learnt from its message) replaces the pings; one with the same or a longer one does
     * nothing.
     */
    void startPings(Duration interval, Duration writeTimeout) {
        long ms = Math.max(1, interval.toMillis());
        if (pings != null) {
            if (ms >= pingMillis) {
                return;
            }
            pings.cancel(false);
        }
        pingMillis = ms;
        long stuck = writeTimeout.toNanos();
        pings = PINGER.scheduleWithFixedDelay(() -> {
            long since = sendingSince;
            if (since != 0) {
                if (System.nanoTime() - since > stuck) {
                    close();
                }
                return;
            }
            PING_WRITERS.execute(() -> {
                try {
                    send(OobMessage.ping());
                } catch (IOException e) {
                    // the peer has gone; the socket stays open for reading: what the peer sent before it
                    // went (a target's reason for ending the run) is still to be read
                    ScheduledFuture<?> p = pings;
                    if (p != null) {
                        p.cancel(false);
                    }
                }
            });
        }, ms, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * The next message other than a ping. Each message, pings included, must be complete within
     * {@code within} of the previous one (or of this call).
     *
     * @throws EOFException           when the peer closed the connection
     * @throws SocketTimeoutException when the peer sent no complete message in time
     */
    OobMessage receive(Duration within) throws IOException {
        while (true) {
            OobMessage m = receiveOne(System.nanoTime() + within.toNanos(), within);
            if (!m.is("ping")) {
                return m;
            }
        }
    }

    /**
     * The next message other than a ping that arrives within {@code within} in all (pings do not extend
     * it); null if none does.
     *
     * @throws EOFException when the peer closed the connection
     */
    OobMessage poll(Duration within) throws IOException {
        long deadline = System.nanoTime() + within.toNanos();
        try {
            while (true) {
                OobMessage m = receiveOne(deadline, within);
                if (!m.is("ping")) {
                    return m;
                }
            }
        } catch (SocketTimeoutException e) {
            return null;
        }
    }

    private OobMessage receiveOne(long deadline, Duration within) throws IOException {
        byte[] buf = new byte[256];
        int n = 0;
        while (true) {
            if (in.available() == 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw timeout(within);
                }
                socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left))));
            }
            int c;
            try {
                c = in.read();
            } catch (SocketTimeoutException e) {
                throw timeout(within);
            }
            if (c < 0) {
                throw new EOFException("out-of-band connection to " + remote + " closed");
            }
            if (c == '\n') {
                break;
            }
            if (n == MAX_LINE) {
                throw notOurProtocol(buf, n, "a line longer than " + MAX_LINE + " bytes");
            }
            if (n == buf.length) {
                buf = Arrays.copyOf(buf, Math.min(MAX_LINE, n * 2));
            }
            buf[n++] = (byte) c;
        }
        try {
            OobMessage m = JSON.readValue(new String(buf, 0, n, StandardCharsets.UTF_8), OobMessage.class);
            if (m == null || m.op() == null) {
                throw notOurProtocol(buf, n, "a message without op");
            }
            return m;
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw notOurProtocol(buf, n, "no JSON message");
        }
    }

    /**
     * The peer sent something that is not a message of this protocol: most likely it is another
     * service (ssh, http) at the address given, not tcpx4j.
     */
    private IOException notOurProtocol(byte[] line, int n, String what) {
        StringBuilder shown = new StringBuilder();
        for (int i = 0; i < n && shown.length() < 40; i++) {
            char c = (char) (line[i] & 0xff);
            shown.append(c >= 0x20 && c < 0x7f ? c : '.');
        }
        return new IOException(remote + " does not speak the tcpx4j out-of-band protocol (it sent " + what + ": \""
                + shown + (n > 40 ? "..." : "") + "\")");
    }

    private SocketTimeoutException timeout(Duration within) {
        return new SocketTimeoutException(remote + " sent no complete message within " + Durations.format(within));
    }

    /**
     * Sends {@code request} and returns the reply, which must be {@code expected}; an error reply
     * throws, and so does silence for longer than {@code within}.
     */
    OobMessage call(OobMessage request, String expected, Duration within) throws IOException {
        send(request);
        return expect(request.op(), expected, within, null);
    }

    /**
     * Reads the reply to {@code requestOp}; see {@link #call}. With {@code waitNotices}, {@code wait}
     * messages are printed there and the reply after them is returned.
     */
    OobMessage expect(String requestOp, String expected, Duration within, PrintStream waitNotices) throws IOException {
        OobMessage reply;
        try {
            reply = receive(within);
            while (waitNotices != null && reply.is("wait")) {
                waitNotices.println("tcpx4j: bench target " + remote + ": " + reply.message());
                waitNotices.flush();
                reply = receive(within);
            }
        } catch (SocketTimeoutException e) {
            throw new IOException("bench target " + remote + " did not answer '" + requestOp + "': nothing for "
                    + Durations.format(within) + " (--oob-timeout); is it still running?", e);
        } catch (EOFException e) {
            throw new IOException("bench target " + remote + " closed the connection instead of answering '"
                    + requestOp + "'", e);
        }
        if (reply.is("error")) {
            throw new IOException("bench target " + remote + ": " + reply.message());
        }
        if (reply.is("busy")) {
            throw new TurnedAway("bench target " + remote + " is full: " + reply.message(), null);
        }
        if (!reply.is(expected)) {
            throw new IOException("bench target " + remote + " answered '" + reply.op() + "' to '" + requestOp
                    + "', expected '" + expected + "'");
        }
        return reply;
    }

    @Override
    public void close() {
        ScheduledFuture<?> p = pings;
        if (p != null) {
            p.cancel(false);
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }
}
