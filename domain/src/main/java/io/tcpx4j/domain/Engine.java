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
import java.util.concurrent.atomic.AtomicLong;

/**
 * The transfer engine: one per process or GPU. All protocol work happens in one progress agent,
 * {@link #doWork()}, either on a dedicated thread ({@link #start()}) or pumped by hand
 * ({@link #startManual()}, for deterministic tests). Application threads only validate and enqueue,
 * and may lend their own thread to the agent with {@link #progress()} (hosts that poll for
 * completion, like NIXL's {@code checkXfer}); duty cycles never overlap.
 *
 * <p>The engine composes its parts: a {@link RegionRegistry} of registered memory, a
 * {@link PeerDirectory} of peers and connections, the sessions through which applications post, and
 * a {@link DutyCycle} that decides who runs the duty cycle, one thread at a time.
 *
 * <p>Thread-safe: every public method may be called from any thread; {@link #doWork()} from one
 * thread at a time (the agent).
 */
public final class Engine implements TransferEngine {

    private static final System.Logger LOG = System.getLogger(Engine.class.getName());
    /**
     * New control connections are rare, and a handshake takes several round trips: a cycle polls the
     * listener at most once a millisecond (a quiet agent blocks on the listener's readiness instead).
     */
    private static final long ACCEPT_POLL_NANOS = 1_000_000;
    private static final long HOUSEKEEPING_NANOS = 1_000_000;
    /** Longest a quiet agent blocks: bounds how late housekeeping (deregistration, redials) runs. */
    private static final long MAX_BLOCK_MILLIS = 100;

    private final EngineConfig config;
    private final NetTransport transport;
    /** Whether the transport has I/O of its own that the thread running a cycle may drive. */
    private final boolean drivable;
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
    private final DutyCycle duty;

    // agent only (dutyCycles is read racily by stats())
    private long dutyCycles;
    private long lastHousekeeping;
    private long lastAccept;

    private ControlListener listener;
    private volatile byte[] connInfo;
    private volatile AgentRunner runner;
    private Runnable stopWakes = () -> { };
    private volatile boolean closed;

    public Engine(EngineConfig config, NetTransport transport, DeviceMemory memory, Unpacker unpacker, Clock clock) {
        this.config = Objects.requireNonNull(config, "config");
        this.memory = Objects.requireNonNull(memory, "memory");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.drivable = transport.drivable();
        Objects.requireNonNull(unpacker, "unpacker");
        this.packsDevice = unpacker.reaches(MemoryKind.VRAM);
        this.identity = new LocalIdentity(config.name());
        this.commands = new CommandQueue(config.name());
        this.registry = new RegionRegistry(config.name(), memory, transport, commands);
        this.directory = new PeerDirectory(
                new EngineContext(identity, config, transport, unpacker, clock, registry), notifications, readiness);
        this.duty = new DutyCycle(new Core(), readiness,
                Math.min(MAX_BLOCK_MILLIS, Math.max(1, config.heartbeat().toMillis() / 2)));
    }

    // ------------------------------------------------------------------ lifecycle

    /** Binds the control listener and starts the progress thread, which waits as {@link EngineConfig#idle()} says. */
    public synchronized void start() {
        bind();
        AgentRunner r = new AgentRunner("tcpx4j-agent-" + config.name(), duty, config.idle(), readiness);
        runner = r;
        // commands and transport completions; while a caller polls, the runner leaves its park alone
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

    /** What the duty cycle, run by the agent thread or a caller of progress(), does in this engine. */
    private final class Core implements DutyCycle.Owner {

        @Override
        public int cycle() {
            return Engine.this.cycle();
        }

        @Override
        public boolean idle() {
            return commands.isEmpty() && directory.quiet();
        }

        @Override
        public int drive() {
            return transport.drive();
        }

        @Override
        public boolean driveDue() {
            return drivable && directory.outstandingRequests() > 0;
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
        duty.shutDown();
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
     * drives every connection; while requests are out on the transport, a turn of the transport's own
     * I/O first ({@link NetTransport#drive()}). Returns the amount of work done (0 when idle).
     */
    public int doWork() {
        return duty.doWork();
    }

    /**
     * Runs duty cycles on the calling thread while they find work (at most 16), unless another thread
     * runs one right now, each with a turn of the transport's own I/O ({@link NetTransport#drive()});
     * returns the work done. A host that polls for completion calls this from its loop, so its own
     * thread moves the bytes even when the agent thread and the transport's threads get no CPU; the
     * agent thread, if started, stays off the duty cycle while a call runs, however long, and until
     * {@link DutyCycle#CALLER_LEASE_NANOS} (1 ms) after the last call, then serves again (the loopback
     * transport's I/O threads likewise); after calls that came without pause it checks less often, and
     * serves again up to {@link io.tcpx4j.domain.port.out.StandAside#MAX_PARK_NANOS} (8 ms) after the
     * last, or at once for a command. An error fails the connections, as on the agent.
     */
    @Override
    public int progress() {
        return duty.progress();
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
        return new RemoteSession(knownPeer(peer), commands, registry, directory, xferIds, config, packsDevice);
    }

    @Override
    public List<Notification> drainNotifications() {
        Notification n = notifications.poll();
        if (n == null) {
            return List.of(); // hosts poll this in a loop: nothing allocated when nothing came
        }
        List<Notification> out = new ArrayList<>();
        do {
            out.add(n);
        } while ((n = notifications.poll()) != null);
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
