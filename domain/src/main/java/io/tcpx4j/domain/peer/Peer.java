package io.tcpx4j.domain.peer;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.domain.datapath.PeerTraffic;
import io.tcpx4j.domain.protocol.ConnInfo;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A named peer: how to reach it, its published regions, the connection to it with the work that waits for
 * that connection, and the counts of what it did in this engine's memory.
 *
 * <p>Thread-safe for {@link #load}, {@link #info()}, {@link #address()}, the published regions and reading
 * the counts; the connection, the pending queue and counting belong to the engine's agent.
 */
public final class Peer {

    final String name;
    private volatile ConnInfo info;
    private volatile InetSocketAddress address;
    final CopyOnWriteArrayList<MemoryDescriptor> remoteRegions = new CopyOnWriteArrayList<>();
    private final PeerTraffic traffic;

    // agent only
    private boolean forgotten;
    private Connection conn;
    private final ArrayDeque<PendingWork> pending = new ArrayDeque<>();
    private long pendingSince;
    private long crossingLostAt = Long.MIN_VALUE / 2;

    Peer(String name) {
        this.name = name;
        this.traffic = new PeerTraffic(name);
    }

    public String name() {
        return name;
    }

    /** Takes the peer's conn-info; it is dialed at the port {@code info} lists for the agent {@code self} names. */
    void load(ConnInfo info, String self) {
        this.address = new InetSocketAddress(info.host(), info.portFor(self));
        this.info = info;
    }

    /** The conn-info loaded, or null. */
    ConnInfo info() {
        return info;
    }

    InetSocketAddress address() {
        return address;
    }

    /** The counts of what the peer did in this engine's memory, across its connections. */
    PeerTraffic traffic() {
        return traffic;
    }

    /** The region the peer published that holds {@code [address, address+length)}, or null. */
    public MemoryDescriptor publishedRegion(long address, long length) {
        for (MemoryDescriptor r : remoteRegions) {
            if (r.contains(address, length)) {
                return r;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ agent

    /** The connection to the peer (dialing, up or going down), or null. */
    Connection connection() {
        return conn;
    }

    /** {@code c} is now the connection to the peer. */
    void connectedBy(Connection c) {
        conn = c;
    }

    /** Drops {@code c} if it is the connection to the peer; returns whether it was. */
    boolean drop(Connection c) {
        if (conn != c) {
            return false;
        }
        conn = null;
        return true;
    }

    /** Drops {@code c}, which lost a crossing dial, if it is the connection; redials wait from {@code now}. */
    void crossingLost(Connection c, long now) {
        if (drop(c)) {
            crossingLostAt = now;
        }
    }

    /** When the connection last lost a crossing dial. */
    long crossingLostAt() {
        return crossingLostAt;
    }

    /** Queues work until a connection is up; {@code now} starts the wait if nothing waited. */
    void queue(PendingWork work, long now) {
        if (pending.isEmpty()) {
            pendingSince = now;
        }
        pending.add(work);
    }

    /** The oldest work waiting, removed; null if none. */
    PendingWork nextPending() {
        return pending.poll();
    }

    /**
     * Whether nothing of the peer is left but its name and counts: no connection, no work waiting, and
     * neither conn-info nor regions loaded (a peer the engine knows only because it dialed in).
     */
    boolean forgettable() {
        return conn == null && pending.isEmpty() && info == null && remoteRegions.isEmpty();
    }

    /** The directory forgot the peer ({@link #forgettable()}); one of its name may be known again since. */
    boolean forgotten() {
        return forgotten;
    }

    void forget() {
        forgotten = true;
    }

    /** Whether work waits, since {@link #pendingSince()}. */
    boolean hasPending() {
        return !pending.isEmpty();
    }

    long pendingSince() {
        return pendingSince;
    }
}
