package io.tcpx4j.cli;

import io.tcpx4j.api.ByteSize;
import io.tcpx4j.api.PeerStats;

import java.io.EOFException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The target of two-host bench runs: accepts initiators on the out-of-band port and serves their runs
 * one at a time, each with its own registered buffer on one long-lived engine. Used by
 * {@code bench --role target} (one run) and {@code serve} (until closed).
 *
 * <p>Until its hello is complete a connection waits in the {@link HelloGate}, on the thread that
 * runs {@link #serve(int)}: a client that sends nothing, a hello cut short or bytes of another
 * protocol costs no thread, never holds up others, and never keeps a newcomer out (the gate drops
 * the oldest waiting connection to make room, by address; its Javadoc says how). Its hello must be
 * complete within the hello timeout, counted from the accept, or it is dropped. A connection with a
 * complete first line gets a thread of its own, which ends with the connection; at most
 * {@value #MAX_CONNECTIONS} such connections are open at once, and one more is told {@code busy}
 * (its initiator tries again within its {@code --peer-wait}). A valid hello that arrives during a
 * run is told {@code wait} and queued (first come, first served); queued and running sides exchange
 * keep-alives, and a run whose initiator falls silent for the out-of-band timeout ends.
 *
 * <p>Thread-safe for {@link #close()}, which any thread (a signal handler) may call to stop serving;
 * {@link #serve(int)} runs on one thread.
 */
final class TargetServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(TargetServer.class.getName());
    /** Largest buffer an initiator may ask for. */
    static final long MAX_BUFFER = 64L << 30;
    /** Connections past their hello open at once (running, queued, or being refused); more are told busy. */
    static final int MAX_CONNECTIONS = 32;

    private final Node node;
    private final Offer offer;
    private final TransportKind transport;
    private final ServerSocketChannel server;
    private final InetSocketAddress address;
    private final HelloGate gate;
    private final OobOptions timeouts;
    private final Path procfs;
    private final PrintStream log;
    /** A thread per connection past its hello, ending with it: none stays behind a dropped connection. */
    private final ExecutorService handlers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 0, TimeUnit.SECONDS,
            new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "tcpx4j-oob-client");
                t.setDaemon(true);
                return t;
            });
    private final Set<OobChannel> open = ConcurrentHashMap.newKeySet();
    private final ReentrantLock runLock = new ReentrantLock(true);
    /** Taken by the first of {@link #serve} (which then runs the gate and closes it) and {@link #close()}. */
    private final AtomicBoolean gateTaken = new AtomicBoolean();
    private final AtomicInteger ended = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private volatile int maxRuns;
    private volatile String running;
    private volatile boolean closed;

    /**
     * The GPUs a target offers its runs: a run that asks for n takes the first n of them; {@code required},
     * where given, is the n every run must ask for ({@code bench --role target --num-target-dev}). Empty for
     * a target of host memory.
     */
    record Offer(List<Integer> gpus, Integer required) {
        static final Offer HOST = new Offer(List.of(), null);

        Offer {
            gpus = List.copyOf(gpus);
        }
    }

    /**
     * As {@link #TargetServer(Node, Offer, TransportKind, ServerSocketChannel, OobOptions, Path, PrintStream)},
     * serving GPU memory from GPU 0.
     */
    TargetServer(Node node, TransportKind transport, ServerSocketChannel server, OobOptions timeouts, Path procfs,
                 PrintStream log) throws IOException {
        this(node, new Offer(List.of(0), null), transport, server, timeouts, procfs, log);
    }

    /**
     * Serves on {@code server} (from {@link #bind}), which it then owns (and closes if this fails). The
     * node stays owned by the caller.
     *
     * @param offer the GPUs runs may spread over where the node's memory is GPU memory
     * @param log   where one line per run, and per connection dropped, goes (stderr in the CLI)
     */
    TargetServer(Node node, Offer offer, TransportKind transport, ServerSocketChannel server, OobOptions timeouts,
                 Path procfs, PrintStream log) throws IOException {
        this.node = node;
        this.offer = offer;
        this.transport = transport;
        this.server = server;
        this.timeouts = timeouts;
        this.procfs = procfs;
        this.log = log;
        try {
            this.address = (InetSocketAddress) server.getLocalAddress();
            this.gate = new HelloGate(server, timeouts.helloTimeout, log);
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** Binds the out-of-band listener; a failure names the address. */
    static ServerSocketChannel bind(HostPort listen) throws IOException {
        InetSocketAddress at = new InetSocketAddress(listen.host(), listen.port());
        if (at.isUnresolved()) {
            throw new java.net.UnknownHostException("could not resolve " + listen.host() + ", the host of --listen "
                    + listen + " (no such host name, or no name service here)");
        }
        ServerSocketChannel s = ServerSocketChannel.open();
        try {
            s.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            // a backlog as deep as the gate: a burst of connections waits in the kernel, not in SYN retries
            s.bind(at, HelloGate.WAITING);
            return s;
        } catch (IOException e) {
            s.close();
            String hint = e instanceof BindException && String.valueOf(e.getMessage()).contains("in use")
                    ? " (another tcpx4j serve? pick another port)" : "";
            throw new IOException("cannot listen on " + listen + ": " + e.getMessage() + hint, e);
        }
    }

    /** Where initiators connect ({@code --peer}). */
    InetSocketAddress address() {
        return address;
    }

    /** The peers the engine knows now: initiators connected or with work left, each forgotten once gone. */
    List<PeerStats> peers() {
        return node.engine().peerStats();
    }

    /**
     * Serves runs until {@code maxRuns} have ended (0 = no limit) or {@link #close()} is called, then
     * waits for the run in progress to release its buffer. A run that fails is logged and ends;
     * serving goes on.
     *
     * @return the number of runs that ended, well or not
     */
    int serve(int maxRuns) {
        this.maxRuns = maxRuns;
        boolean gateOurs = gateTaken.compareAndSet(false, true); // else close() came first and closed it
        while (gateOurs && !closed) {
            List<HelloGate.Arrival> arrivals;
            try {
                arrivals = gate.next();
            } catch (IOException e) {
                if (closed) {
                    break;
                }
                LOG.log(System.Logger.Level.WARNING, "waiting for connections failed: {0}", e.getMessage());
                continue;
            }
            for (HelloGate.Arrival a : arrivals) {
                admit(a);
            }
        }
        close();
        if (gateOurs) {
            gate.close();
        }
        handlers.shutdownNow();
        try {
            if (!handlers.awaitTermination(30, TimeUnit.SECONDS)) {
                LOG.log(System.Logger.Level.WARNING, "a run did not end within 30 s of stopping");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return ended.get();
    }

    /** A connection out of the gate: its own thread, or {@code busy} when too many are open. */
    private void admit(HelloGate.Arrival a) {
        OobChannel c;
        try {
            c = new OobChannel(a.channel().socket(), a.received());
        } catch (IOException e) {
            closeQuietly(a.channel().socket());
            return;
        }
        if (closed) {
            c.close();
            return;
        }
        if (open.size() >= MAX_CONNECTIONS) {
            turnAway(c);
            return;
        }
        open.add(c);
        handlers.execute(() -> handle(c));
    }

    /** Tells a connection there is no room now; its first message is all there is in its socket buffer. */
    private void turnAway(OobChannel c) {
        log.println("tcpx4j: turned away " + c.remote() + ": " + MAX_CONNECTIONS + " connections are open");
        try (c) {
            c.send(OobMessage.busy("this target has " + MAX_CONNECTIONS + " initiators connected (one run, the others"
                    + " queued); try again later"));
        } catch (IOException ignored) {
            // the client learns from the closed connection
        }
    }

    /** One connection: its hello (complete: the gate read it), a place in the queue, then its run. */
    private void handle(OobChannel c) {
        try (c) {
            OobMessage hello;
            try {
                hello = c.receive(timeouts.helloTimeout);
            } catch (IOException e) {
                if (!closed) {
                    log.println("tcpx4j: dropped " + c.remote() + " before its hello: " + e.getMessage());
                }
                return;
            }
            String refusal = refusal(hello);
            if (refusal != null) {
                log.println("tcpx4j: refused " + c.remote() + ": " + refusal);
                c.send(OobMessage.error(refusal));
                return;
            }
            c.startPings(timeouts.pingInterval(hello.peerTimeout()), timeouts.timeout);
            if (!runLock.tryLock()) {
                String now = running;
                c.send(OobMessage.waiting("waiting for the current run" + (now != null ? " (" + now + ")" : "")
                        + " to finish"));
                log.println("tcpx4j: " + hello.name() + " at " + c.remote() + " waits for the current run");
                runLock.lockInterruptibly();
            }
            try {
                if (closed) {
                    return;
                }
                running = "from " + hello.name() + " at " + c.remote();
                serveOne(c, hello);
            } catch (IOException e) {
                if (!closed) {
                    failed.incrementAndGet();
                    log.println("tcpx4j: run from " + c.remote() + " failed: " + e.getMessage());
                }
            } finally {
                running = null;
                int n = ended.incrementAndGet();
                runLock.unlock();
                if (maxRuns > 0 && n >= maxRuns) {
                    close();
                }
            }
        } catch (IOException e) {
            if (!closed) {
                log.println("tcpx4j: connection from " + c.remote() + " failed: " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // stopping
        } finally {
            open.remove(c);
        }
    }

    private void serveOne(OobChannel c, OobMessage hello) throws IOException {
        List<Integer> gpus = node.kind() == io.tcpx4j.api.MemoryKind.DRAM ? List.of()
                : offer.gpus().subList(0, hello.devicesAsked());
        log.println("tcpx4j: run from " + hello.name() + " at " + c.remote() + ": " + hello.bytes() + "-byte buffer"
                + (gpus.isEmpty() ? "" : gpus.size() == 1 ? " on GPU " + gpus.get(0)
                : "s on GPUs " + DeviceList.join(gpus)));
        try (TargetSide side = new TargetSide(node, gpus, hello.bytes())) {
            // the initiator dials the engine; loading its conn-info would keep it known after it has gone,
            // one entry per initiator for the life of the server
            c.send(OobMessage.welcome(node.engine().name(), node.engine().connInfo(), side.metadata(),
                    timeouts.timeout, node.channels()));
            while (true) {
                OobMessage m;
                try {
                    m = c.receive(timeouts.timeout);
                } catch (EOFException e) {
                    throw new IOException("initiator left before the end of its run");
                } catch (SocketTimeoutException e) {
                    tell(c, "no message from the initiator for " + Durations.format(timeouts.timeout)
                            + " (the target's --oob-timeout)");
                    throw new IOException("initiator sent nothing for " + Durations.format(timeouts.timeout)
                            + " (--oob-timeout); ending its run");
                }
                try {
                    switch (m.op()) {
                        case "fill" -> {
                            side.fill(m.seed(), m.blockSize(), blocks(m, side));
                            c.send(OobMessage.ok());
                        }
                        case "verify" -> {
                            Verified v = side.verify(m.seed(), m.blockSize(), blocks(m, side), m.notes());
                            c.send(OobMessage.verified(v.mismatches(), v.perGpu()));
                        }
                        case "raw" -> {
                            long n = m.bytes() == null ? 0 : m.bytes();
                            if (n < 1 || n > 1024) {
                                throw new IllegalArgumentException("raw baseline of " + n + " sockets");
                            }
                            java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open();
                            server.bind(new java.net.InetSocketAddress(c.localAddress(), 0), (int) n);
                            RawBaseline.acceptReaders(server, (int) n, (int) timeouts.timeout.toMillis());
                            c.send(OobMessage.rawPort(((java.net.InetSocketAddress) server.getLocalAddress()).getPort()));
                        }
                        case "bye" -> {
                            side.finish(m.notes());
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

    /** Tells the initiator why its run ends, if it still listens (it may have gone). */
    private static void tell(OobChannel c, String why) {
        try {
            c.send(OobMessage.error(why));
        } catch (IOException ignored) {
            // the initiator learns from the closed connection
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
        String gpus = gpuRefusal(hello.devicesAsked());
        if (gpus != null) {
            return gpus;
        }
        if (hello.transport() != null && !hello.transport().equals(transport.label())) {
            return "this target runs --transport " + transport.label() + ", the initiator --transport " + hello.transport();
        }
        if (node.kind() == io.tcpx4j.api.MemoryKind.DRAM) {
            String shortage = HostRam.shortage(hello.bytes(), procfs, "a buffer of " + ByteSize.format(hello.bytes()));
            if (shortage != null) {
                return shortage + " on the target";
            }
        }
        return null;
    }

    /** Why this target cannot spread a run's buffers over {@code asked} GPUs, or null. */
    private String gpuRefusal(int asked) {
        if (asked < 1) {
            return "a run over " + asked + " GPUs asked";
        }
        if (node.kind() == io.tcpx4j.api.MemoryKind.DRAM) {
            return asked == 1 ? null : "this target serves --mem dram (one buffer of host memory), the initiator"
                    + " asked for " + asked + " target GPUs (--num-target-dev)";
        }
        if (offer.required() != null && asked != offer.required()) {
            return "this target runs --num-target-dev " + offer.required() + ", the initiator asked for " + asked
                    + " (--num-target-dev)";
        }
        if (asked > offer.gpus().size()) {
            return "this target offers " + offer.gpus().size() + (offer.gpus().size() == 1 ? " GPU" : " GPUs")
                    + " (--device-list " + DeviceList.join(offer.gpus()) + "), the initiator asked for " + asked
                    + " (--num-target-dev)";
        }
        return null;
    }

    /** The blocks a fill or verify covers, if the run's buffers hold them. */
    private static long blocks(OobMessage m, TargetSide side) {
        long bytes = m.bytes() == null ? -1 : m.bytes();
        long block = m.blockSize();
        if (bytes < 0 || block < 1 || bytes % block != 0 || !side.holds(block, bytes / block)) {
            throw new IllegalArgumentException("range of " + m.bytes() + " bytes in blocks of " + m.block()
                    + " bytes outside the run's buffers");
        }
        return bytes / block;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // nothing to release
        }
    }

    /**
     * Stops serving: closes the listener and every connection, the running one included; {@link #serve}
     * closes those waiting for their hello as it returns. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        if (gateTaken.compareAndSet(false, true)) {
            gate.close(); // serve() never ran: the gate is this thread's to close
        } else {
            gate.wakeup();
        }
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (OobChannel c : open) {
            c.close();
        }
    }

    /** Runs that failed (the target ended them, or they broke); each was logged as it ended. */
    int failedRuns() {
        return failed.get();
    }

    boolean isClosed() {
        return closed;
    }
}
