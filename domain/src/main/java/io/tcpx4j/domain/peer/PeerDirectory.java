package io.tcpx4j.domain.peer;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.datapath.PeerTraffic;
import io.tcpx4j.domain.idle.IdleSelector;
import io.tcpx4j.domain.log.RateLimitedLog;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.protocol.RegionMetadata;
import io.tcpx4j.domain.transfer.Post;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The peers an engine knows and its connections to them: dialing, admitting incoming connections
 * (crossing dials keep the one dialed by the smaller name; a peer that dials again while connected has
 * restarted or lost the old connection), work queued until a peer's connection is up, and retries. A peer
 * the engine knows only because it dialed in is forgotten once nothing of it is left
 * ({@link Peer#forgettable()}), so that an engine serving peers with ever new names keeps none of the gone.
 *
 * <p>Thread-safe for loading peers and their metadata and for {@link #knownPeer}; everything that
 * touches connections or pending work belongs to the engine's agent.
 */
public final class PeerDirectory {

    private static final long REDIAL_AFTER_CROSSING_NANOS = 1_000_000_000L;

    private final EngineContext ctx;
    private final Queue<Notification> notifications;
    private final IdleSelector readiness;
    private final ConcurrentHashMap<String, Peer> peers = new ConcurrentHashMap<>();
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final RateLimitedLog failures = new RateLimitedLog(System.getLogger(PeerDirectory.class.getName()));
    private boolean connectionsClosed;

    public PeerDirectory(EngineContext ctx, Queue<Notification> notifications, IdleSelector readiness) {
        this.ctx = ctx;
        this.notifications = notifications;
        this.readiness = readiness;
    }

    // ------------------------------------------------------------------ peers (any thread)

    // loads update the peer under the map's lock for its name, which housekeeping holds to forget it

    public void loadPeer(String name, ConnInfo info) {
        peers.compute(name, (n, p) -> {
            Peer known = p != null ? p : made(n);
            known.load(info, ctx.name());
            return known;
        });
    }

    public void loadRemoteMetadata(RegionMetadata md) {
        peers.compute(md.owner(), (n, p) -> {
            Peer known = p != null ? p : made(n);
            known.remoteRegions.addIfAbsent(md.region());
            return known;
        });
    }

    /** The peer named {@code name}; one the engine did not know yet is made, and its counts join the roster. */
    private Peer peer(String name) {
        Peer p = peers.get(name);
        return p != null ? p : peers.computeIfAbsent(name, this::made);
    }

    private Peer made(String name) {
        Peer p = new Peer(name);
        ctx.roster().add(p.traffic());
        return p;
    }

    public void unloadRemoteMetadata(String peer, RegionMetadata md) {
        Peer p = peers.get(peer);
        if (p == null || !p.remoteRegions.remove(md.region())) {
            throw new TransferException(Code.NOT_FOUND, "no region " + md.region() + " loaded for " + peer);
        }
    }

    public Peer knownPeer(String name) {
        Objects.requireNonNull(name, "peer");
        Peer p = peers.get(name);
        if (p == null) {
            throw new TransferException(Code.NOT_FOUND, "unknown peer " + name + ": load its conn-info first");
        }
        return p;
    }

    // ------------------------------------------------------------------ agent

    /** Starts {@code post} on the peer's connection, or queues it and dials if there is none. */
    public void post(Peer p, Post post) {
        Connection c = p.connection();
        if (c != null && c.isEstablished()) {
            c.transfers().start(post);
        } else if (p.forgotten()) {
            post(peer(p.name), post);
        } else {
            enqueue(p, new PendingWork.Transfer(post));
        }
    }

    /** Sends {@code message} to the peer, or queues it and dials if there is no connection. */
    public void sendNotification(Peer p, byte[] message) {
        Connection c = p.connection();
        if (c != null && c.isEstablished()) {
            c.sendNotification(message);
        } else if (p.forgotten()) {
            sendNotification(peer(p.name), message);
        } else {
            enqueue(p, new PendingWork.Notify(message));
        }
    }

    /** {@code p}, or, where housekeeping forgot it after the caller looked it up, the peer of its name now. */
    private Peer live(Peer p) {
        return p.forgotten() ? peer(p.name) : p;
    }

    private void enqueue(Peer p, PendingWork work) {
        p.queue(work, ctx.now());
        if (p.connection() == null) {
            dial(p);
        }
    }

    public void connect(Peer p) {
        p = live(p);
        if (p.connection() == null) {
            dial(p);
        }
    }

    public void disconnect(Peer p, TransferException reason) {
        p = live(p);
        if (p.connection() != null) {
            p.connection().bye(reason);
        }
        failPending(p, reason);
    }

    /** Wraps an accepted control socket. */
    public void accepted(SocketChannel s) throws IOException {
        Events events = new Events(null);
        events.conn = Connection.accepted(ctx, events, s);
        events.conn.watch(readiness);
        connections.add(events.conn);
    }

    /**
     * One duty cycle of every connection. With more than one, a poll of the agent's readiness first finds
     * the control sockets with bytes to read, and only those are read: one system call per cycle in place
     * of one per connection.
     */
    public int doWork(long now) {
        int work = 0;
        boolean polled = connections.size() > 1;
        if (polled) {
            readiness.poll();
        }
        for (int i = 0; i < connections.size(); i++) {
            Connection c = connections.get(i);
            try {
                work += c.doWork(now, polled);
            } catch (RuntimeException e) {
                // a fault in one connection's handling (a frame no check foresaw) is that connection's alone
                failures.log(System.Logger.Level.ERROR, ctx.name() + ": connection failed on an error", e);
                c.fail(new TransferException(Code.BACKEND, "connection failed on an error: " + e, e));
                work++;
            }
        }
        if (connectionsClosed) {
            connectionsClosed = false;
            connections.removeIf(Connection::isClosed);
            // a socket closed while a selector holds its key keeps its descriptor until that selector
            // selects again, which the poll would not do while one connection or none is left
            readiness.poll();
        }
        return work;
    }

    /**
     * Whether every connection waits for an event a driver can block on (see {@link Connection#quiet}),
     * counting transport completions among them where {@code transportSignals}.
     */
    public boolean quiet(boolean transportSignals) {
        for (int i = 0; i < connections.size(); i++) {
            if (!connections.get(i).quiet(transportSignals)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Fails queued work that waited too long for a connection; redials peers that lost a crossing dial;
     * forgets the peers nothing is left of.
     */
    public int housekeeping(long now) {
        int work = 0;
        for (Peer p : peers.values()) {
            if (p.connection() == null && p.hasPending()) {
                if (now - p.pendingSince() > ctx.config().connectTimeout().toNanos()) {
                    failPending(p, new TransferException(Code.REMOTE_DISCONNECT, "no connection to " + p.name
                            + " within " + ctx.config().connectTimeout().toMillis() + " ms"));
                } else if (now - p.crossingLostAt() > REDIAL_AFTER_CROSSING_NANOS) {
                    dial(p);
                }
                work++;
            } else if (p.forgettable()) {
                forget(p);
            }
        }
        return work;
    }

    /**
     * Drops {@code p} from the directory and its counts from the roster, unless a load made it known
     * meanwhile or a connection of it is still up; a caller that still holds it reaches the peer of its
     * name through {@link #live}.
     */
    private void forget(Peer p) {
        peers.computeIfPresent(p.name, (n, known) -> {
            if (known != p || !p.forgettable() || !ctx.roster().forget(p.traffic())) {
                return known;
            }
            p.forget();
            return null;
        });
    }

    /** Fails every connection (the agent itself failed). */
    public void failAll(TransferException reason) {
        for (Connection c : new ArrayList<>(connections)) {
            c.fail(reason);
        }
    }

    /** Closes every connection gracefully and fails all queued work. */
    public void closeAll(TransferException reason) {
        for (Connection c : new ArrayList<>(connections)) {
            c.bye(reason);
        }
        connections.clear();
        for (Peer p : peers.values()) {
            failPending(p, reason);
        }
    }

    private void dial(Peer p) {
        ConnInfo info = p.info();
        if (info == null) {
            failPending(p, new TransferException(Code.NOT_FOUND,
                    "peer " + p.name + " has no conn-info loaded and is not connected"));
            return;
        }
        try {
            Events events = new Events(p);
            events.conn = Connection.dial(ctx, events, p.name, p.address(), info.secret());
            events.conn.watch(readiness);
            p.connectedBy(events.conn);
            connections.add(events.conn);
        } catch (IOException | RuntimeException e) {
            failPending(p, new TransferException(Code.REMOTE_DISCONNECT,
                    "cannot dial " + p.name + " at " + p.address() + ": " + e, e));
        }
    }

    private static void start(Connection c, PendingWork work) {
        if (work instanceof PendingWork.Transfer t) {
            c.transfers().start(t.post());
        } else {
            c.sendNotification(((PendingWork.Notify) work).message());
        }
    }

    private static void failPending(Peer p, TransferException reason) {
        PendingWork work;
        while ((work = p.nextPending()) != null) {
            if (work instanceof PendingWork.Transfer t) {
                t.post().releaseRegions();
                t.post().xfer().fail(reason);
            }
        }
    }

    // ------------------------------------------------------------------ observability

    /** Open connections, requests they hold on the transport, transfers in flight on them. */
    public record Counts(int connections, int requests, int operations) {
    }

    /** A snapshot of the connections' counters; racy reads from any thread. */
    public Counts counts() {
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
        return new Counts(conns, reqs, ops);
    }

    /** One connection's view of the directory. */
    private final class Events implements ConnectionEvents {

        /** The dialed peer, or the one whose HELLO admitted the connection. */
        private Peer peer;
        private Connection conn;
        /** Whether the connection came up and has not closed since: the roster counts it as up. */
        private boolean up;

        Events(Peer peer) {
            this.peer = peer;
        }

        @Override
        public Handshake.Refusal admit(String name, long peerIncarnation) {
            if (!ctx.serves(name)) {
                return Handshake.misdirected(ctx, name);
            }
            Peer p = peer(name);
            Connection existing = p.connection();
            if (existing != null && existing != conn && !existing.isClosed()) {
                boolean ourNameWins = ctx.name().compareTo(name) < 0;
                if (existing.isDialer() && !existing.isEstablished()) {
                    if (ourNameWins) {
                        return Handshake.duplicate(ctx.identity());
                    }
                    existing.abandon();
                    connectionsClosed = true;
                } else if (existing.isEstablished() && existing.isDialer()
                        && existing.peerIncarnation() == peerIncarnation && ourNameWins) {
                    // the peer's half of a crossing dial arriving late: ours, dialed by the smaller name, stays
                    return Handshake.duplicate(ctx.identity());
                } else {
                    existing.fail(new TransferException(Code.REMOTE_DISCONNECT, "peer " + name + " reconnected"
                            + (existing.peerIncarnation() != peerIncarnation ? " after a restart" : "")));
                }
            }
            peer = p;
            p.connectedBy(conn);
            return null;
        }

        @Override
        public PeerTraffic traffic() {
            return peer.traffic();
        }

        @Override
        public void established() {
            up = true;
            ctx.roster().up(peer.traffic());
            PendingWork work;
            while ((work = peer.nextPending()) != null) {
                start(conn, work);
            }
        }

        @Override
        public void deliver(byte[] message) {
            notifications.add(new Notification(peer.name, message));
        }

        @Override
        public void crossingLost() {
            connectionsClosed = true;
            peer.crossingLost(conn, ctx.now());
        }

        @Override
        public void closed(TransferException reason) {
            connectionsClosed = true;
            if (reason != null && peer != null && peer.drop(conn)) {
                failPending(peer, reason);
            }
            if (up) {
                up = false;
                ctx.roster().down(peer.traffic());
            }
        }
    }
}
