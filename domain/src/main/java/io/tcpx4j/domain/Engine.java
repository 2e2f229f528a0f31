package io.tcpx4j.domain;

import io.tcpx4j.api.EngineStats;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.PeerListener;
import io.tcpx4j.api.PeerStats;
import io.tcpx4j.api.Progress;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.agent.CommandQueue;
import io.tcpx4j.domain.agent.ProgressAgent;
import io.tcpx4j.domain.peer.EngineContext;
import io.tcpx4j.domain.peer.LocalIdentity;
import io.tcpx4j.domain.peer.Peer;
import io.tcpx4j.domain.peer.PeerDirectory;
import io.tcpx4j.domain.peer.PeerRoster;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.protocol.RegionMetadata;
import io.tcpx4j.domain.registration.RegionRegistry;
import io.tcpx4j.domain.session.LocalSession;
import io.tcpx4j.domain.session.RemoteSession;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The transfer engine: one per process or GPU. All protocol work happens in its progress agents
 * ({@link ProgressAgent}; one by default, {@link EngineConfig#agents()}), each serving the peers whose
 * names hash to it and each with exactly one driver ({@link EngineConfig#progress()}): a thread of its
 * own, or the application's threads through {@link #progress()} and {@code Transfer.await}
 * ({@link #start()}); tests pump them by hand ({@link #startManual()}, then {@link #progress()}).
 * Application threads only validate and enqueue; an agent's duty cycles never overlap.
 *
 * <p>The engine composes its parts: a {@link RegionRegistry} of registered memory the agents share, and
 * per agent a {@link PeerDirectory} of its peers and connections; the sessions through which
 * applications post go to the agent of their peer.
 *
 * <p>Thread-safe: every public method may be called from any thread.
 */
public final class Engine implements TransferEngine {

    private final EngineConfig config;
    private final DeviceMemory memory;
    private final LocalIdentity identity;
    private final RegionRegistry registry;
    private final NotificationInbox notifications = new NotificationInbox();
    private final PeerRoster peers = new PeerRoster();
    private final AtomicLong xferIds = new AtomicLong();
    /** Whether the unpacker gathers and scatters device memory (packed chunks of VRAM descriptors). */
    private final boolean packsDevice;
    private final ProgressAgent[] agents;
    /** The unpackers of agents 1.., made by the engine and closed once every agent has shut down. */
    private final List<ScatterGather> ownUnpackers = new ArrayList<>();
    private final AtomicInteger agentsUp;

    private volatile byte[] connInfo;
    private volatile boolean closed;
    /** Whether tests pump the agents by hand ({@link #startManual()}). */
    private volatile boolean manual;

    /**
     * An engine whose first agent uses {@code unpacker} (the caller's, closed by the caller); further agents
     * get their own from {@link ScatterGather#another()}, which the engine closes.
     */
    public Engine(EngineConfig config, NetTransport transport, DeviceMemory memory, ScatterGather unpacker, Clock clock) {
        this.config = Objects.requireNonNull(config, "config");
        this.memory = Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(unpacker, "unpacker");
        this.packsDevice = unpacker.reaches(MemoryKind.VRAM);
        this.identity = new LocalIdentity(config.name());
        int n = config.agents();
        CommandQueue[] queues = new CommandQueue[n];
        for (int i = 0; i < n; i++) {
            queues[i] = new CommandQueue(config.name());
        }
        this.registry = new RegionRegistry(config.name(), memory, queues[0]);
        this.agentsUp = new AtomicInteger(n);
        this.agents = new ProgressAgent[n];
        for (int i = 0; i < n; i++) {
            ScatterGather u = i == 0 ? unpacker : anotherUnpacker(unpacker);
            agents[i] = new ProgressAgent(new EngineContext(identity, config, transport, u, clock, registry, peers, i),
                    queues[i], notifications, this::agentShutDown);
        }
    }

    private ScatterGather anotherUnpacker(ScatterGather first) {
        try {
            ScatterGather u = first.another();
            ownUnpackers.add(u);
            return u;
        } catch (RuntimeException e) {
            closeOwnUnpackers();
            throw e;
        }
    }

    // ------------------------------------------------------------------ lifecycle

    /**
     * Binds the control listeners and starts the agents' drivers as {@link EngineConfig#progress()} says: a
     * thread per agent, or none (the application's threads drive).
     */
    public synchronized void start() {
        bind();
        for (ProgressAgent a : agents) {
            a.start();
        }
    }

    /** Binds the control listeners; the caller pumps {@link #progress()} itself (deterministic tests). */
    public synchronized void startManual() {
        bind();
        manual = true;
    }

    private void bind() {
        if (connInfo != null) {
            throw new TransferException(Code.NOT_ALLOWED, "engine " + config.name() + " already started");
        }
        if (closed) {
            throw new TransferException(Code.NOT_ALLOWED, "engine " + config.name() + " is closed");
        }
        List<Integer> ports = new ArrayList<>();
        try {
            for (int i = 0; i < agents.length; i++) {
                ports.add(agents[i].bind(config.listenPort() == 0 ? 0 : config.listenPort() + i));
            }
        } catch (RuntimeException e) {
            for (int i = 0; i < ports.size(); i++) {
                agents[i].unbind();
            }
            throw e;
        }
        connInfo = new ConnInfo(config.name(), agents[0].advertiseHost(), ports, identity.secret()).encode();
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (ProgressAgent a : agents) {
                a.commands.close();
            }
        }
        for (ProgressAgent a : agents) {
            a.close(config.shutdownTimeout().toMillis() + 1000);
        }
    }

    /** Called by each agent once it has shut down: the last one frees what the agents share. */
    private void agentShutDown() {
        if (agentsUp.decrementAndGet() == 0) {
            registry.close();
            closeOwnUnpackers();
        }
    }

    private void closeOwnUnpackers() {
        for (ScatterGather u : ownUnpackers) {
            try {
                u.close();
            } catch (RuntimeException ignored) {
                // closing anyway
            }
        }
        ownUnpackers.clear();
    }

    // ------------------------------------------------------------------ agents

    /**
     * Where the application's threads drive the engine ({@link Progress.Driver#CALLER}, or pumped by hand:
     * {@link #startManual()}): one duty cycle of each agent on the calling thread, unless another thread drives
     * that agent right now (runs queued commands, accepts control connections, moves every connection on);
     * returns the work done, 0 when idle. Where the engine's own threads drive it: nothing, 0. Never blocks.
     * An error fails the agent's connections, as on its thread.
     */
    @Override
    public int progress() {
        if (!callerDriven()) {
            return 0;
        }
        int work = 0;
        for (ProgressAgent a : agents) {
            work += a.doWork();
        }
        return work;
    }

    /** Whether the application's threads drive the agents: {@link Progress.Driver#CALLER}, or pumped by hand. */
    private boolean callerDriven() {
        return manual || config.progress().driver() == Progress.Driver.CALLER;
    }

    /** How often the agents' drivers blocked in the kernel waiting for an event so far. */
    long driverBlocks() {
        long n = 0;
        for (ProgressAgent a : agents) {
            n += a.blocks();
        }
        return n;
    }

    /** The agent that serves {@code peer}. */
    private ProgressAgent agentOf(String peer) {
        return agents[ConnInfo.agentFor(peer, agents.length)];
    }

    // ------------------------------------------------------------------ memory

    @Override
    public RegisteredMemory register(MemoryDescriptor m) {
        checkOpen();
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
        checkOpen();
        ConnInfo ci = ConnInfo.decode(info);
        if (!ci.name().equals(name)) {
            throw new TransferException(Code.INVALID_PARAM, "conn-info of " + ci.name() + " loaded as " + name);
        }
        if (!name.equals(config.name())) {
            agentOf(name).directory.loadPeer(name, ci);
        }
    }

    @Override
    public void loadRemoteMetadata(String peer, byte[] publicMetadata) {
        RegionMetadata md = RegionMetadata.decode(publicMetadata);
        if (!md.owner().equals(peer)) {
            throw new TransferException(Code.INVALID_PARAM, "metadata of " + md.owner() + " loaded for " + peer);
        }
        if (!peer.equals(config.name())) {
            agentOf(peer).directory.loadRemoteMetadata(md);
        }
    }

    @Override
    public void unloadRemoteMetadata(String peer, byte[] publicMetadata) {
        agentOf(peer).directory.unloadRemoteMetadata(peer, RegionMetadata.decode(publicMetadata));
    }

    @Override
    public void connect(String peer) {
        Peer p = knownPeer(peer);
        ProgressAgent a = agentOf(peer);
        a.commands.execute(() -> a.directory.connect(p));
    }

    @Override
    public void disconnect(String peer) {
        Peer p = knownPeer(peer);
        ProgressAgent a = agentOf(peer);
        a.commands.execute(() -> a.directory.disconnect(p,
                new TransferException(Code.REMOTE_DISCONNECT, "disconnected from " + peer + " locally")));
    }

    private Peer knownPeer(String name) {
        Objects.requireNonNull(name, "peer");
        checkOpen();
        return agentOf(name).directory.knownPeer(name);
    }

    private void checkOpen() {
        agents[0].commands.checkOpen();
    }

    @Override
    public Session session(String peer) {
        Objects.requireNonNull(peer, "peer");
        checkOpen();
        if (peer.equals(config.name())) {
            return new LocalSession(config.name(), agents[0].commands, registry, memory, notifications, xferIds);
        }
        ProgressAgent a = agentOf(peer);
        return new RemoteSession(knownPeer(peer), a.commands, registry, a.directory, xferIds, config, packsDevice,
                callerDriven() ? a : null);
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

    @Override
    public void onNotification(Consumer<Notification> listener) {
        notifications.listen(listener);
    }

    // ------------------------------------------------------------------ observability

    /**
     * A snapshot of the engine's counters ({@code dutyCycles} counts the agents' passes since start). Safe from
     * any thread, but the connection figures are read without synchronisation and may be slightly stale while
     * the agent runs.
     */
    @Override
    public EngineStats stats() {
        int conns = 0;
        int reqs = 0;
        int ops = 0;
        long cycles = 0;
        for (ProgressAgent a : agents) {
            PeerDirectory.Counts c = a.directory.counts();
            conns += c.connections();
            reqs += c.requests();
            ops += c.operations();
            cycles += a.dutyCycles();
        }
        return new EngineStats(conns, reqs, ops, registry.size(), notifications.size(), cycles);
    }

    /**
     * The counts of what each peer did in this engine's memory, kept by the agent that serves the peer as it
     * serves it; a peer joins when the engine first knows it (loaded, or admitted when it connected), and stays
     * while the engine knows it: a peer known only because it dialed in is forgotten once its last connection
     * closed and nothing waits for it.
     */
    @Override
    public List<PeerStats> peerStats() {
        return peers.peers();
    }

    /** Listeners hear of a peer when its connection is established and when its last one closed. */
    @Override
    public void addPeerListener(PeerListener listener) {
        peers.listen(listener);
    }

    @Override
    public void removePeerListener(PeerListener listener) {
        peers.stopListening(listener);
    }
}
