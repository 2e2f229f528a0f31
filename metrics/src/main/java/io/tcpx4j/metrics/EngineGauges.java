package io.tcpx4j.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.tcpx4j.api.PeerListener;
import io.tcpx4j.api.PeerStats;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Meters read from an engine's own counters at each scrape, tagged {@code engine}.
 *
 * <p>Gauges of {@link TransferEngine#stats()}: {@code tcpx4j.engine.connections}, {@code
 * tcpx4j.engine.requests.outstanding} (transport requests), {@code tcpx4j.engine.operations.live} (operations in
 * flight on its connections: the transfers it posted and those peers posted into it), {@code
 * tcpx4j.engine.regions} and {@code tcpx4j.engine.notifications.queued}.
 *
 * <p>Counters of what each peer did in the engine's memory ({@link TransferEngine#peerStats()}), tagged {@code
 * peer} and {@code op} ({@code write}: the peer's WRITEs that landed here; {@code read}: the peer's READs served
 * from here): {@value #SERVED_TRANSFERS} ({@code tcpx4j_served_transfers_total}), {@value #SERVED_BYTES} ({@code
 * tcpx4j_served_bytes_total}) and {@value #SERVED_REFUSALS} ({@code tcpx4j_served_refusals_total}, also tagged
 * {@code code}, one of {@link PeerStats#REFUSAL_CODES}). This is the target side of the one-sided protocol, which
 * the engine's {@link MeteredTransferEngine} never sees. A peer's counters are registered when its connection comes
 * up ({@link PeerListener}) and removed once it has been gone for the time given (default {@link #KEEP_GONE}),
 * at the next connection that comes up or goes: a scrape after a peer disconnected still shows its last counts. A
 * peer that connects again within that time keeps its series (counting again from zero if the engine forgot the
 * peer meanwhile: {@link PeerStats}).
 *
 * <p>The meters hold the engine strongly until {@link #close()} removes them.
 *
 * <p>Thread-safe.
 */
public final class EngineGauges implements AutoCloseable {

    /** Transfers peers made in the engine's memory; tags engine, peer, op. */
    public static final String SERVED_TRANSFERS = "tcpx4j.served.transfers";
    /** Their bytes; tags engine, peer, op. */
    public static final String SERVED_BYTES = "tcpx4j.served.bytes";
    /** Transfers of peers the engine refused; tags engine, peer, op, code. */
    public static final String SERVED_REFUSALS = "tcpx4j.served.refusals";
    /** How long a peer's counters stay after its last connection closed, unless told otherwise. */
    public static final Duration KEEP_GONE = Duration.ofMinutes(5);

    private final MeterRegistry registry;
    private final TransferEngine engine;
    private final Tags tags;
    private final long keepGoneNanos;
    private final List<Meter> gauges = new ArrayList<>();
    /** The meters of each peer that connected, and since when it is gone. Guarded by this. */
    private final Map<PeerStats, Peer> peers = new IdentityHashMap<>();
    private final PeerListener listener = new PeerListener() {
        @Override
        public void connected(PeerStats peer) {
            peerConnected(peer);
        }

        @Override
        public void disconnected(PeerStats peer) {
            peerGone(peer);
        }
    };
    private boolean closed;

    /** The engine's gauges and its peers' counters, each peer's kept for {@link #KEEP_GONE} after it went. */
    public EngineGauges(TransferEngine engine, MeterRegistry registry) {
        this(engine, registry, KEEP_GONE);
    }

    /**
     * The engine's gauges and its peers' counters, each peer's kept for {@code keepGone} after its last connection
     * closed (zero: removed as it goes).
     */
    public EngineGauges(TransferEngine engine, MeterRegistry registry, Duration keepGone) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.registry = Objects.requireNonNull(registry, "registry");
        if (Objects.requireNonNull(keepGone, "keepGone").isNegative()) {
            throw new IllegalArgumentException("keepGone must not be negative: " + keepGone);
        }
        this.keepGoneNanos = keepGone.toNanos();
        this.tags = Tags.of("engine", engine.name());
        gauge("tcpx4j.engine.connections", "connections to peers", e -> e.stats().connections());
        gauge("tcpx4j.engine.requests.outstanding", "transport requests posted and not yet completed",
                e -> e.stats().outstandingRequests());
        gauge("tcpx4j.engine.operations.live", "operations in flight on the engine's connections, posted here or by peers",
                e -> e.stats().liveOperations());
        gauge("tcpx4j.engine.regions", "registered memory regions", e -> e.stats().registeredRegions());
        gauge("tcpx4j.engine.notifications.queued", "notifications received and not yet drained",
                e -> e.stats().notificationsQueued());
        engine.addPeerListener(listener);
    }

    private void gauge(String name, String description, ToDoubleFunction<TransferEngine> f) {
        gauges.add(Gauge.builder(name, engine, f).description(description).tags(tags).strongReference(true)
                .register(registry));
    }

    private synchronized void peerConnected(PeerStats peer) {
        if (closed) {
            return;
        }
        Peer p = peers.get(peer);
        if (p == null) {
            // a peer the engine forgot and knows again has new counters: its series now read those
            for (Iterator<Map.Entry<PeerStats, Peer>> i = peers.entrySet().iterator(); i.hasNext(); ) {
                Map.Entry<PeerStats, Peer> e = i.next();
                if (e.getKey().peer().equals(peer.peer())) {
                    remove(e.getValue().meters);
                    i.remove();
                }
            }
            peers.put(peer, new Peer(register(peer)));
        } else {
            p.gone = false;
        }
        sweep(System.nanoTime());
    }

    private synchronized void peerGone(PeerStats peer) {
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        Peer p = peers.get(peer);
        if (p != null) {
            p.gone = true;
            p.goneAt = now;
        }
        sweep(now);
    }

    /** Removes the meters of peers gone for at least the time they are kept. */
    private void sweep(long now) {
        for (Iterator<Peer> i = peers.values().iterator(); i.hasNext(); ) {
            Peer p = i.next();
            if (p.gone && now - p.goneAt >= keepGoneNanos) {
                remove(p.meters);
                i.remove();
            }
        }
    }

    private List<Meter> register(PeerStats peer) {
        List<Meter> meters = new ArrayList<>();
        Tags t = tags.and("peer", peer.peer());
        Tags write = t.and("op", "write");
        Tags read = t.and("op", "read");
        String transfers = "transfers of the peer served in this engine's memory: WRITEs landed, READs sent in full";
        meters.add(counter(SERVED_TRANSFERS, transfers, null, write, peer, PeerStats::writes));
        meters.add(counter(SERVED_TRANSFERS, transfers, null, read, peer, PeerStats::reads));
        String bytes = "bytes of the transfers of the peer served in this engine's memory";
        meters.add(counter(SERVED_BYTES, bytes, "bytes", write, peer, PeerStats::bytesWritten));
        meters.add(counter(SERVED_BYTES, bytes, "bytes", read, peer, PeerStats::bytesRead));
        String refused = "transfers of the peer this engine refused, by code";
        for (TransferException.Code code : PeerStats.REFUSAL_CODES) {
            meters.add(counter(SERVED_REFUSALS, refused, null, write.and("code", code.name()), peer,
                    p -> p.refusedWrites(code)));
            meters.add(counter(SERVED_REFUSALS, refused, null, read.and("code", code.name()), peer,
                    p -> p.refusedReads(code)));
        }
        return meters;
    }

    private FunctionCounter counter(String name, String description, String unit, Tags tags, PeerStats peer,
                                    ToDoubleFunction<PeerStats> count) {
        return FunctionCounter.builder(name, peer, count).description(description).baseUnit(unit).tags(tags)
                .register(registry);
    }

    private void remove(List<Meter> meters) {
        for (Meter m : meters) {
            registry.remove(m);
        }
    }

    /** Stops listening to the engine's peers and removes every meter from the registry. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        engine.removePeerListener(listener);
        remove(gauges);
        gauges.clear();
        for (Peer p : peers.values()) {
            remove(p.meters);
        }
        peers.clear();
    }

    /** One peer's meters, and whether and since when it is gone. */
    private static final class Peer {
        final List<Meter> meters;
        boolean gone;
        long goneAt;

        Peer(List<Meter> meters) {
            this.meters = meters;
        }
    }
}
