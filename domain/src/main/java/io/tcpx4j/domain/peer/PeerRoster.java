package io.tcpx4j.domain.peer;

import io.tcpx4j.api.PeerListener;
import io.tcpx4j.api.PeerStats;
import io.tcpx4j.domain.datapath.PeerTraffic;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The per-peer counters of every peer an engine knows, across its agents, in the order the engine came to know
 * them (a peer the engine forgets leaves); which of those peers have a connection up; and the
 * {@link PeerListener}s told when one connects or goes.
 *
 * <p>Thread-safe. Reading the list takes no lock and allocates nothing; a connection coming up or going and a
 * listener being added happen under this roster's lock, so that each listener hears of each change once and
 * in order.
 */
public final class PeerRoster {

    private static final System.Logger LOG = System.getLogger(PeerRoster.class.getName());

    private final CopyOnWriteArrayList<PeerStats> peers = new CopyOnWriteArrayList<>();
    private final List<PeerStats> view = Collections.unmodifiableList(peers);
    private final CopyOnWriteArrayList<PeerListener> listeners = new CopyOnWriteArrayList<>();
    /** The connections up per peer that has any, in the order they came up (under this roster's lock). */
    private final Map<PeerStats, Integer> up = new LinkedHashMap<>();

    /** Every peer's counters so far: a live, unmodifiable list. */
    public List<PeerStats> peers() {
        return view;
    }

    /** Tells {@code listener} of every peer connected now, then of each change. */
    public synchronized void listen(PeerListener listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        for (PeerStats p : up.keySet()) {
            tell(listener, p, true);
        }
    }

    /** Stops telling {@code listener}. */
    public void stopListening(PeerListener listener) {
        listeners.remove(listener);
    }

    /** A peer new to the engine. */
    void add(PeerTraffic traffic) {
        peers.add(traffic);
    }

    /** The engine forgets a peer: its counters leave the list, unless a connection of it is up. */
    synchronized boolean forget(PeerTraffic traffic) {
        return !up.containsKey(traffic) && peers.remove(traffic);
    }

    /** A connection of the peer came up. */
    synchronized void up(PeerTraffic traffic) {
        if (up.merge(traffic, 1, Integer::sum) == 1) {
            for (PeerListener l : listeners) {
                tell(l, traffic, true);
            }
        }
    }

    /** A connection of the peer that had come up closed. */
    synchronized void down(PeerTraffic traffic) {
        Integer n = up.get(traffic);
        if (n == null) {
            return;
        }
        if (n > 1) {
            up.put(traffic, n - 1);
            return;
        }
        up.remove(traffic);
        for (PeerListener l : listeners) {
            tell(l, traffic, false);
        }
    }

    private static void tell(PeerListener listener, PeerStats peer, boolean connected) {
        try {
            if (connected) {
                listener.connected(peer);
            } else {
                listener.disconnected(peer);
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "a peer listener failed on " + peer.peer(), e);
        }
    }
}
