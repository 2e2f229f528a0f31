package io.tcpx4j.cli;

import java.io.EOFException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Locale;

/**
 * The target of two-host bench runs: accepts initiators on the out-of-band port and serves their runs
 * one at a time (others wait in the listen backlog), each with its own registered buffer on one
 * long-lived engine. Used by {@code bench --role target} (one run) and {@code serve} (until closed).
 *
 * <p>Thread-safe for {@link #close()}, which any thread (a signal handler) may call to stop serving;
 * {@link #serve(int)} runs on one thread.
 */
final class TargetServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(TargetServer.class.getName());
    /** Largest buffer an initiator may ask for. */
    static final long MAX_BUFFER = 64L << 30;

    private final Node node;
    private final TransportKind transport;
    private final ServerSocket server;
    private final PrintStream log;
    private volatile OobChannel current;
    private volatile boolean closed;

    /**
     * Binds the out-of-band listener. The node stays owned by the caller.
     *
     * @param log where one line per run goes (stderr in the CLI)
     */
    TargetServer(Node node, TransportKind transport, HostPort listen, PrintStream log) throws IOException {
        this.node = node;
        this.transport = transport;
        this.log = log;
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(listen.host(), listen.port()), 16);
        this.server = s;
    }

    /** Where initiators connect ({@code --peer}). */
    InetSocketAddress address() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    /**
     * Serves runs until {@code maxRuns} have ended (0 = no limit) or {@link #close()} is called.
     * A run that fails is logged and ends; serving goes on.
     *
     * @return the number of runs that ended, well or not
     */
    int serve(int maxRuns) {
        int runs = 0;
        while (!closed && (maxRuns <= 0 || runs < maxRuns)) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (closed) {
                    break;
                }
                LOG.log(System.Logger.Level.WARNING, "accept failed: {0}", e.getMessage());
                continue;
            }
            try (OobChannel c = new OobChannel(s)) {
                current = c;
                if (closed) {
                    break;
                }
                serveOne(c);
            } catch (IOException e) {
                if (!closed) {
                    log.println("tcpx4j: run from " + s.getRemoteSocketAddress() + " failed: " + e.getMessage());
                }
            } finally {
                current = null;
            }
            runs++;
        }
        return runs;
    }

    private void serveOne(OobChannel c) throws IOException {
        OobMessage hello = c.receive();
        String refusal = refusal(hello);
        if (refusal != null) {
            c.send(OobMessage.error(refusal));
            throw new IOException(refusal);
        }
        log.println("tcpx4j: run from " + hello.name() + " at " + c.remote() + ": " + hello.bytes() + "-byte buffer");
        try (TargetSide side = new TargetSide(node, hello.bytes())) {
            node.engine().loadPeer(hello.name(), hello.connInfo());
            c.send(OobMessage.welcome(node.engine().name(), node.engine().connInfo(), side.metadata()));
            while (true) {
                OobMessage m;
                try {
                    m = c.receive();
                } catch (EOFException e) {
                    throw new IOException("initiator left before the end of its run");
                }
                try {
                    switch (m.op()) {
                        case "fill" -> {
                            side.fill(m.seed(), checkBytes(m.bytes(), hello.bytes()));
                            c.send(OobMessage.ok());
                        }
                        case "verify" -> c.send(OobMessage.verified(
                                side.verify(m.seed(), checkBytes(m.bytes(), hello.bytes()), m.tag())));
                        case "bye" -> {
                            side.finish(m.tag());
                            c.send(OobMessage.ok());
                            log.println("tcpx4j: run from " + hello.name() + " done");
                            return;
                        }
                        default -> c.send(OobMessage.error("unknown op '" + m.op() + "'"));
                    }
                } catch (RuntimeException e) {
                    c.send(OobMessage.error(String.valueOf(e.getMessage())));
                    throw new IOException(e.getMessage(), e);
                }
            }
        } catch (RuntimeException e) {
            c.send(OobMessage.error(String.valueOf(e.getMessage())));
            throw new IOException(e.getMessage(), e);
        }
    }

    private String refusal(OobMessage hello) {
        if (!hello.is("hello")) {
            return "expected hello, got '" + hello.op() + "'";
        }
        if (hello.version() == null || hello.version() != OobMessage.VERSION) {
            return "out-of-band protocol version " + hello.version() + ", this target speaks " + OobMessage.VERSION;
        }
        if (hello.name() == null || hello.connInfo() == null || hello.bytes() == null) {
            return "incomplete hello";
        }
        if (hello.bytes() < 1 || hello.bytes() > MAX_BUFFER) {
            return "buffer of " + hello.bytes() + " bytes asked; this target serves 1.." + MAX_BUFFER;
        }
        String mem = node.kind().name().toLowerCase(Locale.ROOT);
        if (hello.mem() != null && !hello.mem().equals(mem)) {
            return "this target serves --mem " + mem + ", the initiator asked for --mem " + hello.mem();
        }
        if (hello.transport() != null && !hello.transport().equals(transport.label())) {
            return "this target runs --transport " + transport.label() + ", the initiator --transport " + hello.transport();
        }
        return null;
    }

    private static long checkBytes(Long bytes, long max) {
        if (bytes == null || bytes < 0 || bytes > max) {
            throw new IllegalArgumentException("range of " + bytes + " bytes outside the run's " + max + "-byte buffer");
        }
        return bytes;
    }

    /** Stops serving: closes the listener and the connection of the run in progress. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        OobChannel c = current;
        if (c != null) {
            c.close();
        }
    }

    boolean isClosed() {
        return closed;
    }

}
