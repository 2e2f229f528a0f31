package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.Unpacker;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.RegionMetadata;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The transfer engine: one per process or GPU. All protocol work happens in one progress agent,
 * {@link #doWork()}, either on a dedicated thread ({@link #start()}) or pumped by hand
 * ({@link #startManual()}, for deterministic tests). Application threads only validate and enqueue.
 *
 * <p>Thread-safe: every public method may be called from any thread; {@link #doWork()} from one
 * thread at a time (the agent).
 */
public final class Engine implements TransferEngine {

    private static final System.Logger LOG = System.getLogger(Engine.class.getName());

    private final EngineConfig config;
    private final NetTransport transport;
    private final DeviceMemory memory;
    private final Unpacker unpacker;
    private final Clock clock;
    private final byte[] secret = new byte[ConnInfo.SECRET_BYTES];
    private final long incarnation;

    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final ConcurrentHashMap<String, Peer> peers = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Notification> notifications = new ConcurrentLinkedQueue<>();
    private final AtomicLong xferIds = new AtomicLong();

    // registry: copy-on-write array sorted by start address, guarded by `this` for writers
    private volatile LocalRegion[] regions = new LocalRegion[0];
    private final Map<Long, RegistrationGroup> deviceGroups = new HashMap<>();

    // agent-only state
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final List<LocalRegion> deregistering = new ArrayList<>();
    private boolean connectionsClosed;
    private LocalRegion discard;
    private long lastHousekeeping;
    private long lastAccept;
    private static final long ACCEPT_POLL_NANOS = 100_000;

    private ServerSocketChannel server;
    private volatile byte[] connInfo;
    private volatile Thread agentThread;
    private volatile boolean running;
    private volatile boolean closed;
    private final CountDownLatch stopped = new CountDownLatch(1);

    public Engine(EngineConfig config, NetTransport transport, DeviceMemory memory, Unpacker unpacker, Clock clock) {
        this.config = Objects.requireNonNull(config, "config");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.memory = Objects.requireNonNull(memory, "memory");
        this.unpacker = Objects.requireNonNull(unpacker, "unpacker");
        this.clock = Objects.requireNonNull(clock, "clock");
        SecureRandom random = new SecureRandom();
        random.nextBytes(secret);
        this.incarnation = random.nextLong();
    }

    // ------------------------------------------------------------------ lifecycle

    /** Binds the control listener and starts the progress thread. */
    public synchronized void start() {
        bind();
        running = true;
        Thread t = new Thread(this::runAgent, "tcpx4j-agent-" + config.name());
        t.setDaemon(true);
        agentThread = t;
        t.start();
    }

    /** Binds the control listener; the caller pumps {@link #doWork()} itself. */
    public synchronized void startManual() {
        bind();
    }

    private void bind() {
        if (server != null) {
            throw new TransferException(Code.NOT_ALLOWED, "engine " + config.name() + " already started");
        }
        if (closed) {
            throw new TransferException(Code.NOT_ALLOWED, "engine " + config.name() + " is closed");
        }
        try {
            InetAddress listen = InetAddress.getByName(config.listenHost());
            String advertise = config.advertiseHost() != null ? config.advertiseHost() : config.listenHost();
            if (config.advertiseHost() == null && listen.isAnyLocalAddress()) {
                throw new TransferException(Code.INVALID_PARAM,
                        "listening on the wildcard address " + config.listenHost() + ": set advertiseHost to an address peers can reach");
            }
            ServerSocketChannel s = ServerSocketChannel.open();
            s.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            s.bind(new InetSocketAddress(listen, config.listenPort()));
            s.configureBlocking(false);
            server = s;
            int port = ((InetSocketAddress) s.getLocalAddress()).getPort();
            connInfo = new ConnInfo(config.name(), advertise, port, secret).encode();
        } catch (IOException e) {
            throw new TransferException(Code.BACKEND, "cannot listen on " + config.listenHost() + ":"
                    + config.listenPort() + ": " + e.getMessage(), e);
        }
    }

    private void runAgent() {
        int idle = 0;
        try {
            while (running) {
                int work;
                try {
                    work = doWork();
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.ERROR, "progress agent of " + config.name() + " failed", e);
                    failAll(new TransferException(Code.BACKEND, "engine failure: " + e, e));
                    work = 1;
                }
                if (work > 0) {
                    idle = 0;
                } else {
                    idle = idle(idle);
                }
            }
            shutdownOnAgent();
        } finally {
            stopped.countDown();
        }
    }

    /*
     * Idle strategy, Agrona's BackoffIdleStrategy shape: a few spins, a few yields, then parks doubling
     * from 1 us to 200 us. Commands unpark the agent; transport completions and control frames are
     * polled, so the cap bounds their latency (a 1 ms cap measured 0.81x raw below). Every idle duty cycle
     * costs system calls (accept, control-stream read), so spinning is not free: with 50 spins and 50
     * yields the agents took CPU from the loopback I/O threads on 2 cores and a 64 MiB WRITE ran at
     * 0.74x a raw socket copy; with this, 0.92x (EngineVsRawBench, docs/PERFORMANCE.md).
     */
    private static final int IDLE_SPINS = 10;
    private static final int IDLE_YIELDS = 5;
    private static final long IDLE_MIN_PARK_NANOS = 1_000L;
    private static final long IDLE_MAX_PARK_NANOS = 200_000L;
    private static final int IDLE_MAX = IDLE_SPINS + IDLE_YIELDS + 20;

    /** Spin briefly, then yield, then park with a growing, capped sleep. Commands unpark the agent. */
    private static int idle(int idle) {
        if (idle < IDLE_SPINS) {
            Thread.onSpinWait();
        } else if (idle < IDLE_SPINS + IDLE_YIELDS) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(Math.min(IDLE_MIN_PARK_NANOS << (idle - IDLE_SPINS - IDLE_YIELDS),
                    IDLE_MAX_PARK_NANOS));
        }
        return Math.min(idle + 1, IDLE_MAX);
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = agentThread;
        }
        if (t != null) {
            running = false;
            LockSupport.unpark(t);
            try {
                if (!stopped.await(config.shutdownTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
                    LOG.log(System.Logger.Level.WARNING, "agent of {0} did not stop in time", config.name());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            shutdownOnAgent();
        }
    }

    private void shutdownOnAgent() {
        TransferException reason = new TransferException(Code.CANCELED, "engine " + config.name() + " closed");
        Runnable r;
        while ((r = commands.poll()) != null) {
            try {
                r.run();
            } catch (RuntimeException ignored) {
                // closing anyway
            }
        }
        for (Connection c : new ArrayList<>(connections)) {
            c.bye(reason);
        }
        connections.clear();
        for (Peer p : peers.values()) {
            failPending(p, reason);
        }
        for (LocalRegion region : deregistering) {
            finishDeregister(region);
        }
        deregistering.clear();
        if (discard != null) {
            memory.free(discard.range);
            discard = null;
        }
        try {
            if (server != null) {
                server.close();
            }
        } catch (IOException ignored) {
            // nothing to release beyond the socket
        }
    }

    // ------------------------------------------------------------------ agent

    /**
     * One duty cycle of the progress agent: runs queued commands, accepts control connections and
     * drives every connection. Returns the amount of work done (0 when idle).
     */
    public int doWork() {
        int work = 0;
        Runnable r;
        while ((r = commands.poll()) != null) {
            r.run();
            work++;
        }
        if (closed && agentThread == null) {
            return work;
        }
        long now = clock.nanoTime();
        if (now - lastAccept >= ACCEPT_POLL_NANOS) {
            // new control connections are rare: no accept syscall on every duty cycle
            lastAccept = now;
            work += acceptIncoming();
        }
        for (int i = 0; i < connections.size(); i++) {
            work += connections.get(i).doWork(now);
        }
        if (connectionsClosed) {
            connectionsClosed = false;
            connections.removeIf(Connection::isClosed);
        }
        if (now - lastHousekeeping > 1_000_000L) {
            lastHousekeeping = now;
            work += housekeeping(now);
        }
        return work;
    }

    private int acceptIncoming() {
        if (server == null) {
            return 0;
        }
        int work = 0;
        for (int i = 0; i < 4; i++) {
            SocketChannel s;
            try {
                s = server.accept();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "accept failed on {0}: {1}", config.name(), e.getMessage());
                return work;
            }
            if (s == null) {
                return work;
            }
            try {
                connections.add(Connection.accepted(this, s));
                work++;
            } catch (IOException e) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // already broken
                }
            }
        }
        return work;
    }

    private int housekeeping(long now) {
        int work = 0;
        for (int i = deregistering.size() - 1; i >= 0; i--) {
            LocalRegion region = deregistering.get(i);
            if (region.inflight() == 0) {
                finishDeregister(region);
                deregistering.remove(i);
                work++;
            }
        }
        for (Peer p : peers.values()) {
            if (p.conn == null && !p.pending.isEmpty()) {
                if (now - p.pendingSince > config.connectTimeout().toNanos()) {
                    failPending(p, new TransferException(Code.REMOTE_DISCONNECT,
                            "no connection to " + p.name + " within " + config.connectTimeout().toMillis() + " ms"));
                } else if (now - p.crossingLostAt > 1_000_000_000L) {
                    dial(p);
                }
                work++;
            }
        }
        return work;
    }

    private void submit(Runnable command) {
        if (closed) {
            throw new TransferException(Code.CANCELED, "engine " + config.name() + " is closed");
        }
        commands.add(command);
        Thread t = agentThread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    private void failAll(TransferException reason) {
        for (Connection c : new ArrayList<>(connections)) {
            c.fail(reason);
        }
    }

    // ------------------------------------------------------------------ called by connections

    EngineConfig config() {
        return config;
    }

    NetTransport transport() {
        return transport;
    }

    Unpacker unpacker() {
        return unpacker;
    }

    long now() {
        return clock.nanoTime();
    }

    long incarnation() {
        return incarnation;
    }

    boolean secretMatches(byte[] candidate) {
        return MessageDigest.isEqual(secret, candidate);
    }

    int deviceFor(int channel) {
        if (!config.channelDevices().isEmpty()) {
            return config.channelDevices().get(channel % config.channelDevices().size());
        }
        int n = transport.deviceCount();
        if (n < 1) {
            throw new TransferException(Code.BACKEND, "transport " + transport.name() + " reports no network devices");
        }
        return channel % n;
    }

    /**
     * Decides whether an authenticated incoming connection becomes the connection to {@code name}.
     * Crossing dials (both sides dialed at once) keep the one dialed by the smaller name; a peer that
     * dials again while connected has lost the old connection (a restart, or a failure it saw first).
     */
    boolean admit(Connection incoming, String name, long peerIncarnation) {
        Peer p = peers.computeIfAbsent(name, Peer::new);
        Connection existing = p.conn;
        if (existing != null && existing != incoming && !existing.isClosed()) {
            if (existing.dialer && !existing.isEstablished()) {
                if (config.name().compareTo(name) < 0) {
                    return false;
                }
                existing.abandon();
                connectionsClosed = true;
            } else if (existing.isEstablished() && existing.dialer && existing.peerIncarnation == peerIncarnation
                    && config.name().compareTo(name) < 0) {
                // the peer's half of a crossing dial arriving late: ours, dialed by the smaller name, stays
                return false;
            } else {
                existing.fail(new TransferException(Code.REMOTE_DISCONNECT, "peer " + name + " reconnected"
                        + (existing.peerIncarnation != peerIncarnation ? " after a restart" : "")));
            }
        }
        incoming.peer = p;
        p.conn = incoming;
        return true;
    }

    void crossingLost(Connection c) {
        connectionsClosed = true;
        if (c.peer.conn == c) {
            c.peer.conn = null;
            c.peer.crossingLostAt = clock.nanoTime();
        }
    }

    void forgetClosed(Connection c) {
        connectionsClosed = true;
    }

    void established(Connection c) {
        Peer p = c.peer;
        p.incarnation = c.peerIncarnation;
        Object o;
        while ((o = p.pending.poll()) != null) {
            if (o instanceof Post post) {
                c.start(post);
            } else {
                c.sendNotification((byte[]) o);
            }
        }
    }

    void failed(Connection c, TransferException reason) {
        connectionsClosed = true;
        Peer p = c.peer;
        if (p != null && p.conn == c) {
            p.conn = null;
            failPending(p, reason);
        }
    }

    private static void failPending(Peer p, TransferException reason) {
        Object o;
        while ((o = p.pending.poll()) != null) {
            if (o instanceof Post post) {
                post.releaseRegions();
                post.xfer().fail(reason);
            }
        }
    }

    void deliver(String agent, byte[] message) {
        notifications.add(new Notification(agent, message));
    }

    LocalRegion discardRegion() {
        if (discard == null) {
            MemoryDescriptor d = memory.allocate(MemoryKind.DRAM, EngineConfig.MAX_CHUNK, 0);
            discard = new LocalRegion(null, d, new RegistrationGroup(-1, d.address(), d.length(), PtrType.HOST));
        }
        return discard;
    }

    /**
     * Target-side check of remote ranges: each must lie inside one currently registered region. On
     * success the regions are pinned into {@code out} and 0 is returned; otherwise nothing stays pinned
     * and the NIXL status of the refusal is returned.
     */
    int admitRemoteAccess(long[] addresses, long[] lengths, LocalRegion[] out) {
        for (int i = 0; i < addresses.length; i++) {
            LocalRegion r = find(addresses[i], lengths[i], null);
            if (r == null || !r.acquire()) {
                for (int j = 0; j < i; j++) {
                    out[j].releaseRef();
                    out[j] = null;
                }
                return Code.NOT_ALLOWED.nixlStatus();
            }
            out[i] = r;
        }
        return 0;
    }

    // ------------------------------------------------------------------ registry

    @Override
    public RegisteredMemory register(MemoryDescriptor m) {
        Objects.requireNonNull(m, "memory");
        checkOpen();
        if (m.length() == 0) {
            throw new TransferException(Code.INVALID_PARAM, "cannot register an empty range " + m);
        }
        MemoryKind actual = memory.kindOf(m.address());
        if (actual != m.kind()) {
            if (m.kind() == MemoryKind.VRAM && !memory.hasDevices()) {
                throw new TransferException(Code.NOT_SUPPORTED, "no GPU support in this engine: cannot register " + m);
            }
            throw new TransferException(Code.INVALID_PARAM, m + " is " + actual + " memory, not " + m.kind());
        }
        synchronized (this) {
            RegistrationGroup g;
            if (m.kind() == MemoryKind.VRAM) {
                MemoryDescriptor alloc = memory.allocationRange(m.address(), m.length());
                if (!alloc.contains(m.address(), m.length())) {
                    throw new TransferException(Code.INVALID_PARAM, m + " is not inside one allocation");
                }
                g = deviceGroups.computeIfAbsent(alloc.address(),
                        k -> new RegistrationGroup(k, alloc.address(), alloc.length(), PtrType.CUDA));
            } else {
                g = new RegistrationGroup(-1, m.address(), m.length(), PtrType.HOST);
            }
            g.regions++;
            LocalRegion region = new LocalRegion(this, m, g);
            LocalRegion[] old = regions;
            LocalRegion[] next = Arrays.copyOf(old, old.length + 1);
            int at = old.length;
            while (at > 0 && Long.compareUnsigned(next[at - 1].range.address(), m.address()) > 0) {
                next[at] = next[at - 1];
                at--;
            }
            next[at] = region;
            regions = next;
            return region;
        }
    }

    void deregister(LocalRegion region) {
        synchronized (this) {
            LocalRegion[] old = regions;
            int idx = -1;
            for (int i = 0; i < old.length; i++) {
                if (old[i] == region) {
                    idx = i;
                    break;
                }
            }
            if (idx < 0) {
                return;
            }
            LocalRegion[] next = new LocalRegion[old.length - 1];
            System.arraycopy(old, 0, next, 0, idx);
            System.arraycopy(old, idx + 1, next, idx, old.length - idx - 1);
            regions = next;
        }
        if (closed) {
            return;
        }
        submit(() -> deregistering.add(region));
    }

    private void finishDeregister(LocalRegion region) {
        RegistrationGroup g = region.group;
        boolean last;
        synchronized (this) {
            last = --g.regions == 0;
            if (last && g.type == PtrType.CUDA) {
                deviceGroups.remove(g.key);
            }
        }
        if (last) {
            g.forgetAll(transport);
        }
    }

    /** The open region containing {@code [address, address+length)}, of {@code kind} if non-null. */
    private LocalRegion find(long address, long length, MemoryKind kind) {
        LocalRegion[] rs = regions;
        int lo = 0;
        int hi = rs.length - 1;
        int last = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(rs[mid].range.address(), address) <= 0) {
                last = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        for (int i = last; i >= 0; i--) {
            LocalRegion r = rs[i];
            if (r.range.contains(address, length) && !r.isClosed() && (kind == null || r.range.kind() == kind)) {
                return r;
            }
        }
        return null;
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
        if (name.equals(config.name())) {
            return;
        }
        Peer p = peers.computeIfAbsent(name, Peer::new);
        p.address = new InetSocketAddress(ci.host(), ci.port());
        p.info = ci;
    }

    @Override
    public void loadRemoteMetadata(String peer, byte[] publicMetadata) {
        RegionMetadata md = RegionMetadata.decode(publicMetadata);
        if (!md.owner().equals(peer)) {
            throw new TransferException(Code.INVALID_PARAM, "metadata of " + md.owner() + " loaded for " + peer);
        }
        if (peer.equals(config.name())) {
            return;
        }
        Peer p = peers.computeIfAbsent(peer, Peer::new);
        p.remoteRegions.addIfAbsent(md.region());
    }

    @Override
    public void unloadRemoteMetadata(String peer, byte[] publicMetadata) {
        RegionMetadata md = RegionMetadata.decode(publicMetadata);
        Peer p = peers.get(peer);
        if (p == null || !p.remoteRegions.remove(md.region())) {
            throw new TransferException(Code.NOT_FOUND, "no region " + md.region() + " loaded for " + peer);
        }
    }

    @Override
    public void connect(String peer) {
        Peer p = knownPeer(peer);
        submit(() -> {
            if (p.conn == null) {
                dial(p);
            }
        });
    }

    @Override
    public void disconnect(String peer) {
        Peer p = knownPeer(peer);
        submit(() -> {
            TransferException reason = new TransferException(Code.REMOTE_DISCONNECT, "disconnected from " + peer + " locally");
            if (p.conn != null) {
                p.conn.bye(reason);
            }
            failPending(p, reason);
        });
    }

    private void dial(Peer p) {
        if (p.info == null) {
            failPending(p, new TransferException(Code.NOT_FOUND,
                    "peer " + p.name + " has no conn-info loaded and is not connected"));
            return;
        }
        try {
            Connection c = Connection.dial(this, p, p.address);
            p.conn = c;
            connections.add(c);
        } catch (IOException | RuntimeException e) {
            failPending(p, new TransferException(Code.REMOTE_DISCONNECT, "cannot dial " + p.name + " at " + p.address + ": " + e, e));
        }
    }

    private Peer knownPeer(String name) {
        Objects.requireNonNull(name, "peer");
        checkOpen();
        Peer p = peers.get(name);
        if (p == null) {
            throw new TransferException(Code.NOT_FOUND, "unknown peer " + name + ": load its conn-info first");
        }
        return p;
    }

    @Override
    public Session session(String peer) {
        Objects.requireNonNull(peer, "peer");
        checkOpen();
        if (peer.equals(config.name())) {
            return new LocalSession();
        }
        return new RemoteSession(knownPeer(peer));
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

    private void checkOpen() {
        if (closed) {
            throw new TransferException(Code.CANCELED, "engine " + config.name() + " is closed");
        }
    }

    // ------------------------------------------------------------------ sessions

    private static void checkPairs(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(remote, "remote");
        if (local.isEmpty()) {
            throw new TransferException(Code.INVALID_PARAM, "no descriptors");
        }
        if (local.size() != remote.size()) {
            throw new TransferException(Code.MISMATCH, local.size() + " local descriptors, " + remote.size() + " remote");
        }
        if (local.size() > ControlFrame.MAX_RANGES) {
            throw new TransferException(Code.INVALID_PARAM, "more than " + ControlFrame.MAX_RANGES + " descriptors");
        }
        for (int i = 0; i < local.size(); i++) {
            if (local.get(i).length() != remote.get(i).length()) {
                throw new TransferException(Code.MISMATCH, "descriptor " + i + ": local " + local.get(i).length()
                        + " bytes, remote " + remote.get(i).length());
            }
        }
        if (notification != null && notification.length > ControlFrame.MAX_NOTIFICATION) {
            throw new TransferException(Code.INVALID_PARAM, "notification larger than " + ControlFrame.MAX_NOTIFICATION);
        }
    }

    /** Pins the local regions of every descriptor, or throws with nothing pinned. */
    private LocalRegion[] pinLocal(List<MemoryDescriptor> local) {
        LocalRegion[] out = new LocalRegion[local.size()];
        for (int i = 0; i < out.length; i++) {
            MemoryDescriptor d = local.get(i);
            LocalRegion r = find(d.address(), d.length(), d.kind());
            if (r == null || !r.acquire()) {
                for (int j = 0; j < i; j++) {
                    out[j].releaseRef();
                }
                throw new TransferException(Code.NOT_FOUND, "descriptor " + i + " " + d
                        + " is not inside memory registered with " + config.name());
            }
            out[i] = r;
        }
        return out;
    }

    private final class RemoteSession implements Session {
        private final Peer peer;

        RemoteSession(Peer peer) {
            this.peer = peer;
        }

        @Override
        public String peer() {
            return peer.name;
        }

        @Override
        public Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
            return post(true, local, remote, notification);
        }

        @Override
        public Transfer read(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
            return post(false, local, remote, notification);
        }

        private Transfer post(boolean write, List<MemoryDescriptor> local, List<MemoryDescriptor> remote,
                              byte[] notification) {
            checkOpen();
            checkPairs(local, remote, notification);
            int n = local.size();
            long[] la = new long[n];
            long[] ra = new long[n];
            long[] len = new long[n];
            long bytes = 0;
            for (int i = 0; i < n; i++) {
                MemoryDescriptor r = remote.get(i);
                if (!peer.publishes(r.address(), r.length())) {
                    throw new TransferException(Code.NOT_FOUND, "remote descriptor " + i + " " + r
                            + " is not inside a region " + peer.name + " published (load its metadata first)");
                }
                la[i] = local.get(i).address();
                ra[i] = r.address();
                len[i] = r.length();
                bytes += len[i];
            }
            LocalRegion[] pinned = pinLocal(local);
            Xfer x = new Xfer(xferIds.incrementAndGet(), bytes);
            Post p = new Post(write, x, la, ra, len, pinned, notification == null ? null : notification.clone());
            try {
                submit(() -> {
                    if (p.xfer().isEnded()) {
                        return;
                    }
                    Connection c = peer.conn;
                    if (c != null && c.isEstablished()) {
                        c.start(p);
                    } else {
                        if (peer.pending.isEmpty()) {
                            peer.pendingSince = clock.nanoTime();
                        }
                        peer.pending.add(p);
                        if (c == null) {
                            dial(peer);
                        }
                    }
                });
            } catch (TransferException e) {
                p.releaseRegions();
                throw e;
            }
            return x;
        }

        @Override
        public void notify(byte[] message) {
            Objects.requireNonNull(message, "message");
            if (message.length > ControlFrame.MAX_NOTIFICATION) {
                throw new TransferException(Code.INVALID_PARAM, "notification larger than " + ControlFrame.MAX_NOTIFICATION);
            }
            byte[] m = message.clone();
            submit(() -> {
                Connection c = peer.conn;
                if (c != null && c.isEstablished()) {
                    c.sendNotification(m);
                } else {
                    if (peer.pending.isEmpty()) {
                        peer.pendingSince = clock.nanoTime();
                    }
                    peer.pending.add(m);
                    if (c == null) {
                        dial(peer);
                    }
                }
            });
        }
    }

    /** Transfers between two regions of this engine: plain copies, never the network. */
    private final class LocalSession implements Session {

        @Override
        public String peer() {
            return config.name();
        }

        @Override
        public Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
            return copy(local, remote, notification);
        }

        @Override
        public Transfer read(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
            return copy(remote, local, notification);
        }

        private Transfer copy(List<MemoryDescriptor> from, List<MemoryDescriptor> to, byte[] notification) {
            checkOpen();
            checkPairs(from, to, notification);
            LocalRegion[] a = pinLocal(from);
            LocalRegion[] b;
            try {
                b = pinLocal(to);
            } catch (TransferException e) {
                for (LocalRegion r : a) {
                    r.releaseRef();
                }
                throw e;
            }
            long bytes = 0;
            for (MemoryDescriptor d : from) {
                bytes += d.length();
            }
            Xfer x = new Xfer(xferIds.incrementAndGet(), bytes);
            try {
                for (int i = 0; i < from.size(); i++) {
                    if (from.get(i).length() > 0) {
                        memory.copy(to.get(i), from.get(i));
                    }
                }
                if (notification != null) {
                    deliver(config.name(), notification);
                }
                x.succeed();
            } catch (TransferException e) {
                x.fail(e);
            } finally {
                for (LocalRegion r : a) {
                    r.releaseRef();
                }
                for (LocalRegion r : b) {
                    r.releaseRef();
                }
            }
            return x;
        }

        @Override
        public void notify(byte[] message) {
            Objects.requireNonNull(message, "message");
            deliver(config.name(), message.clone());
        }
    }

    // ------------------------------------------------------------------ observability

    /** Counters for tests and leak checks. */
    public record Stats(int connections, int outstandingRequests, int liveOperations, int registeredRegions,
                        int notificationsQueued) {
    }

    /**
     * A snapshot of the engine's counters. Safe from any thread, but the connection figures are read
     * without synchronisation and may be slightly stale while the agent runs.
     */
    public Stats stats() {
        int conns = 0;
        int reqs = 0;
        int ops = 0;
        for (Connection c : connections) {
            if (!c.isClosed()) {
                conns++;
            }
            reqs += c.outstandingRequests();
            ops += c.liveOps();
        }
        return new Stats(conns, reqs, ops, regions.length, notifications.size());
    }
}
