package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.Unpacker;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.protocol.RegionMetadata;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The transfer engine: one per process or GPU. All protocol work happens in one progress agent,
 * {@link #doWork()}, either on a dedicated thread ({@link #start()}) or pumped by hand
 * ({@link #startManual()}, for deterministic tests). Application threads only validate and enqueue,
 * and may lend their own thread to the agent with {@link #progress()} (hosts that poll for
 * completion, like NIXL's {@code checkXfer}); duty cycles never overlap.
 *
 * <p>The engine composes its parts: a {@link RegionRegistry} of registered memory, a
 * {@link PeerDirectory} of peers and connections, and the sessions through which applications post.
 *
 * <p>Thread-safe: every public method may be called from any thread; {@link #doWork()} from one
 * thread at a time (the agent).
 */
public final class Engine implements TransferEngine {

    private static final System.Logger LOG = System.getLogger(Engine.class.getName());
    /** New control connections are rare: no accept system call on every duty cycle. */
    private static final long ACCEPT_POLL_NANOS = 100_000;
    private static final long HOUSEKEEPING_NANOS = 1_000_000;
    /** Longest a quiet agent blocks: bounds how late housekeeping (deregistration, redials) runs. */
    private static final long MAX_BLOCK_MILLIS = 100;
    /** Most duty cycles one {@link #progress()} call runs, so a polling caller gets its thread back. */
    private static final int MAX_INLINE_CYCLES = 16;

    private final EngineConfig config;
    private final NetTransport transport;
    private final DeviceMemory memory;
    private final Clock clock;
    private final LocalIdentity identity;
    private final CommandQueue commands;
    private final Readiness readiness = new Readiness();
    private final RegionRegistry registry;
    private final PeerDirectory directory;
    private final ConcurrentLinkedQueue<Notification> notifications = new ConcurrentLinkedQueue<>();
    private final AtomicLong xferIds = new AtomicLong();
    /** Whether the unpacker gathers and scatters device memory (packed chunks of VRAM descriptors). */
    private final boolean packsDevice;

    // agent only (dutyCycles is read racily by stats())
    private long dutyCycles;
    private long lastHousekeeping;
    private long lastAccept;

    private ControlListener listener;
    private volatile byte[] connInfo;
    private volatile AgentRunner runner;
    private Runnable stopWakes = () -> { };
    private volatile boolean closed;
    private volatile boolean shutDown;
    /** Held by whoever runs a duty cycle: the agent thread or a caller of progress(). */
    private final AtomicBoolean cycling = new AtomicBoolean();
    /**
     * After a call to progress(), the agent thread stays off the duty cycle this long: a host that polls
     * calls again well within it, and an agent thread that took the guard and then lost its CPU to the
     * host's poller would stall the poller for a scheduler tick (milliseconds).
     */
    static final long CALLER_LEASE_NANOS = 1_000_000;
    private volatile long lastCallerNanos = System.nanoTime() - 2 * CALLER_LEASE_NANOS;

    public Engine(EngineConfig config, NetTransport transport, DeviceMemory memory, Unpacker unpacker, Clock clock) {
        this.config = Objects.requireNonNull(config, "config");
        this.memory = Objects.requireNonNull(memory, "memory");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.transport = Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(unpacker, "unpacker");
        this.packsDevice = unpacker.reaches(MemoryKind.VRAM);
        this.identity = new LocalIdentity(config.name());
        this.commands = new CommandQueue(config.name());
        this.registry = new RegionRegistry(config.name(), memory, transport, commands);
        this.directory = new PeerDirectory(
                new EngineContext(identity, config, transport, unpacker, clock, registry), notifications, readiness);
    }

    // ------------------------------------------------------------------ lifecycle

    /** Binds the control listener and starts the progress thread, which waits as {@link EngineConfig#idle()} says. */
    public synchronized void start() {
        bind();
        AgentRunner r = new AgentRunner("tcpx4j-agent-" + config.name(), agent, config.idle(), readiness);
        runner = r;
        commands.wakeWith(r::wake);
        stopWakes = transport.wakeOnProgress(r::wake);
        r.start();
    }

    /** Binds the control listener; the caller pumps {@link #doWork()} itself. */
    public synchronized void startManual() {
        bind();
    }

    private void bind() {
        if (listener != null) {
            throw new TransferException(Code.NOT_ALLOWED, "engine " + config.name() + " already started");
        }
        if (closed) {
            throw new TransferException(Code.NOT_ALLOWED, "engine " + config.name() + " is closed");
        }
        ControlListener l = ControlListener.bind(config, readiness);
        listener = l;
        connInfo = new ConnInfo(config.name(), l.advertiseHost(), l.port(), identity.secret()).encode();
    }

    private final Agent agent = new Agent();

    /** The duty cycle as the agent thread sees it. */
    private final class Agent implements AgentRunner.Agent {

        @Override
        public int doWork() {
            return Engine.this.doWork();
        }

        /**
         * Reads connection state, which belongs to whoever runs the duty cycle: under the same guard, and
         * "not quiet" while a caller of {@link #progress()} holds it.
         */
        @Override
        public boolean quiet() {
            if (!cycling.compareAndSet(false, true)) {
                return false;
            }
            try {
                return commands.isEmpty() && directory.quiet();
            } finally {
                cycling.set(false);
            }
        }

        @Override
        public long callerLeaseNanos() {
            return lastCallerNanos + CALLER_LEASE_NANOS - System.nanoTime();
        }

        @Override
        public long maxBlockMillis() {
            return Math.min(MAX_BLOCK_MILLIS, Math.max(1, config.heartbeat().toMillis() / 2));
        }

        @Override
        public void failed(Throwable e) {
            agentFailed(e);
        }

        @Override
        public void stopped() {
            shutdownOnAgent();
        }
    }

    @Override
    public void close() {
        AgentRunner r;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            commands.close();
            r = runner;
        }
        if (r != null) {
            try {
                if (!r.stop(config.shutdownTimeout().toMillis() + 1000)) {
                    LOG.log(System.Logger.Level.WARNING, "agent of {0} did not stop in time", config.name());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            shutdownOnAgent();
        }
    }

    private void agentFailed(Throwable e) {
        LOG.log(System.Logger.Level.ERROR, "progress agent of " + config.name() + " failed", e);
        directory.failAll(new TransferException(Code.BACKEND, "engine failure: " + e, e));
    }

    private void shutdownOnAgent() {
        while (!cycling.compareAndSet(false, true)) {
            Thread.onSpinWait(); // a caller's duty cycle is finishing
        }
        shutDown = true;
        cycling.set(false);
        stopWakes.run();
        commands.drainOnClose();
        directory.closeAll(new TransferException(Code.CANCELED, "engine " + config.name() + " closed"));
        registry.close();
        if (listener != null) {
            listener.close();
        }
        readiness.close();
    }

    // ------------------------------------------------------------------ agent

    /**
     * One duty cycle of the progress agent: runs queued commands, accepts control connections and
     * drives every connection. Returns the amount of work done (0 when idle).
     */
    public int doWork() {
        if (shutDown || !cycling.compareAndSet(false, true)) {
            return 0;
        }
        try {
            return cycle();
        } finally {
            cycling.set(false);
        }
    }

    /**
     * Runs duty cycles on the calling thread while they find work (at most 16), unless another thread
     * runs one right now, each with a turn of the transport's own I/O ({@link NetTransport#drive()});
     * returns the work done. A host that polls for completion calls this from its loop, so its own
     * thread moves the bytes even when the agent thread and the transport's threads get no CPU; the
     * agent thread, if started, stays off the duty cycle until {@link #CALLER_LEASE_NANOS} (1 ms) after
     * the last call, then serves again (the loopback transport's I/O threads likewise). An error fails
     * the connections, as on the agent.
     */
    @Override
    public int progress() {
        lastCallerNanos = System.nanoTime();
        int total = 0;
        for (int i = 0; i < MAX_INLINE_CYCLES; i++) {
            int work;
            try {
                // the transport's own I/O too (the loopback transport's sockets), on this thread
                work = doWork() + transport.drive();
            } catch (RuntimeException | Error e) {
                agentFailed(e);
                return total + 1;
            }
            if (work == 0) {
                break;
            }
            total += work;
        }
        if (agent.quiet()) {
            return total;
        }
        if (total == 0) {
            // nothing to do here until bytes arrive, or another thread (a staging copy, a peer on the same
            // cores, the transport's own threads when the calls stop) moves them: a host poller calling
            // in a tight loop would hold the core they need
            Thread.yield();
        } else {
            // what this call started needs polling that only the agent thread does when nobody calls:
            // do not let it stay blocked. A quiet engine is moved on only by events that wake it anyway
            // (a frame, a connection, a command, a transport completion), and an extra wake-up costs
            // a thread switch per call on a host whose cores the caller's poller already holds.
            readiness.wake();
        }
        return total;
    }

    private int cycle() {
        dutyCycles++;
        int work = commands.runAll();
        if (closed && runner == null) {
            return work;
        }
        long now = clock.nanoTime();
        if (now - lastAccept >= ACCEPT_POLL_NANOS) {
            lastAccept = now;
            work += listener == null ? 0 : listener.acceptInto(directory, config.name());
        }
        work += directory.doWork(now);
        if (now - lastHousekeeping > HOUSEKEEPING_NANOS) {
            lastHousekeeping = now;
            work += registry.reclaim();
            work += directory.housekeeping(now);
        }
        return work;
    }

    // ------------------------------------------------------------------ memory

    @Override
    public RegisteredMemory register(MemoryDescriptor m) {
        commands.checkOpen();
        return registry.register(m);
    }

    // ------------------------------------------------------------------ peers

    @Override
    public String name() {
        return config.name();
    }

    @Override
    public byte[] connInfo() {
        byte[] c = connInfo;
        if (c == null) {
            throw new TransferException(Code.NOT_POSTED, "engine " + config.name() + " not started");
        }
        return c.clone();
    }

    @Override
    public void loadPeer(String name, byte[] info) {
        Objects.requireNonNull(name, "name");
        commands.checkOpen();
        ConnInfo ci = ConnInfo.decode(info);
        if (!ci.name().equals(name)) {
            throw new TransferException(Code.INVALID_PARAM, "conn-info of " + ci.name() + " loaded as " + name);
        }
        if (!name.equals(config.name())) {
            directory.loadPeer(name, ci);
        }
    }

    @Override
    public void loadRemoteMetadata(String peer, byte[] publicMetadata) {
        RegionMetadata md = RegionMetadata.decode(publicMetadata);
        if (!md.owner().equals(peer)) {
            throw new TransferException(Code.INVALID_PARAM, "metadata of " + md.owner() + " loaded for " + peer);
        }
        if (!peer.equals(config.name())) {
            directory.loadRemoteMetadata(md);
        }
    }

    @Override
    public void unloadRemoteMetadata(String peer, byte[] publicMetadata) {
        directory.unloadRemoteMetadata(peer, RegionMetadata.decode(publicMetadata));
    }

    @Override
    public void connect(String peer) {
        Peer p = knownPeer(peer);
        commands.submit(() -> directory.connect(p));
    }

    @Override
    public void disconnect(String peer) {
        Peer p = knownPeer(peer);
        commands.submit(() -> directory.disconnect(p,
                new TransferException(Code.REMOTE_DISCONNECT, "disconnected from " + peer + " locally")));
    }

    private Peer knownPeer(String name) {
        Objects.requireNonNull(name, "peer");
        commands.checkOpen();
        return directory.knownPeer(name);
    }

    @Override
    public Session session(String peer) {
        Objects.requireNonNull(peer, "peer");
        commands.checkOpen();
        if (peer.equals(config.name())) {
            return new LocalSession(config.name(), commands, registry, memory, notifications, xferIds);
        }
        return new RemoteSession(knownPeer(peer), commands, registry, directory, xferIds,
                config.inlineLimit(), config.packLimit(), packsDevice);
    }

    @Override
    public List<Notification> drainNotifications() {
        List<Notification> out = new ArrayList<>();
        Notification n;
        while ((n = notifications.poll()) != null) {
            out.add(n);
        }
        return out;
    }

    // ------------------------------------------------------------------ observability

    /** Counters for tests and leak checks; {@code dutyCycles} counts the agent's passes since start. */
    public record Stats(int connections, int outstandingRequests, int liveOperations, int registeredRegions,
                        int notificationsQueued, long dutyCycles) {
    }

    /**
     * A snapshot of the engine's counters. Safe from any thread, but the connection figures are read
     * without synchronisation and may be slightly stale while the agent runs.
     */
    public Stats stats() {
        PeerDirectory.Counts c = directory.counts();
        return new Stats(c.connections(), c.requests(), c.operations(), registry.size(), notifications.size(),
                dutyCycles);
    }
}
