package io.tcpx4j.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The meters of one engine's transfers, tagged {@code engine}: one {@link PeerMeters} per peer, created
 * at the first transfer with that peer and kept until {@link #remove()}.
 *
 * <p>Meter names (Prometheus names in brackets): {@value #TRANSFERS} ({@code tcpx4j_transfers_total}),
 * {@value #BYTES} ({@code tcpx4j_transfer_bytes_total}), {@value #LATENCY} ({@code
 * tcpx4j_transfer_latency_seconds}, a histogram: Prometheus computes p50, p99 and p99.9 from its buckets with
 * {@code histogram_quantile}; other registries also get the 0.5, 0.99 and 0.999 percentiles ({@link #PERCENTILES})
 * computed in this process, which a Prometheus registry would compute on every record and never publish, so it
 * is not asked to),
 * {@value #ERRORS} ({@code tcpx4j_transfer_errors_total}) and {@value #IN_FLIGHT} ({@code
 * tcpx4j_transfers_in_flight}).
 *
 * <p>Thread-safe.
 */
public final class TransferMetrics {

    /** Transfers that ended DONE; tags engine, peer, op, memory. */
    public static final String TRANSFERS = "tcpx4j.transfers";
    /** Bytes of the transfers that ended DONE; tags engine, peer, op, memory. */
    public static final String BYTES = "tcpx4j.transfer.bytes";
    /** From the write or read call until the transfer ended DONE; tags engine, peer, op, memory. */
    public static final String LATENCY = "tcpx4j.transfer.latency";
    /** Transfers refused at the call or ended FAILED or RELEASED; tags engine, peer, op, code. */
    public static final String ERRORS = "tcpx4j.transfer.errors";
    /** Transfers posted and not yet ended; tags engine, peer. */
    public static final String IN_FLIGHT = "tcpx4j.transfers.in.flight";
    /** The latency percentiles kept in this process, for registries other than Prometheus'. */
    static final double[] PERCENTILES = {0.5, 0.99, 0.999};

    private final MeterRegistry registry;
    private final boolean keepsPercentiles;
    private volatile boolean removed;
    private final Tags engineTags;
    private final ConcurrentHashMap<String, PeerMeters> peers = new ConcurrentHashMap<>();
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    /** Meters of the engine named {@code engine} in {@code registry}. */
    public TransferMetrics(MeterRegistry registry, String engine) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.engineTags = Tags.of("engine", Objects.requireNonNull(engine, "engine"));
        // Prometheus' text has no place for a histogram's percentiles beside its buckets
        this.keepsPercentiles = !(registry instanceof PrometheusMeterRegistry);
    }

    /**
     * The meters of transfers with {@code peer}, the same instance for every call with that name; null once
     * {@link #remove()} ran.
     */
    PeerMeters peer(String peer) {
        PeerMeters m = peers.get(peer);
        if (m != null || removed) {
            return m;
        }
        synchronized (this) {
            return removed ? null : peers.computeIfAbsent(peer, p -> new PeerMeters(this, engineTags.and("peer", p)));
        }
    }

    MeterRegistry registry() {
        return registry;
    }

    /** Whether latency timers keep {@link #PERCENTILES} in this process. */
    boolean keepsPercentiles() {
        return keepsPercentiles;
    }

    /** Remembers a meter this engine registered, for {@link #remove()}. */
    <M extends Meter> M own(M meter) {
        meters.add(meter);
        if (removed) {
            // a peer's meter made lazily while remove() ran: it goes too
            registry.remove(meter);
        }
        return meter;
    }

    /** Removes every meter of this engine from the registry; transfers after this are not recorded. */
    public synchronized void remove() {
        removed = true;
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
        peers.clear();
    }
}
