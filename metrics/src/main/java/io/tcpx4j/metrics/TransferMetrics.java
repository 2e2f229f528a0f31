package io.tcpx4j.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

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
 * {@code histogram_quantile}; registries that keep percentiles themselves also get the 0.5, 0.99 and 0.999
 * percentiles),
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

    private final MeterRegistry registry;
    private final Tags engineTags;
    private final ConcurrentHashMap<String, PeerMeters> peers = new ConcurrentHashMap<>();
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    /** Meters of the engine named {@code engine} in {@code registry}. */
    public TransferMetrics(MeterRegistry registry, String engine) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.engineTags = Tags.of("engine", Objects.requireNonNull(engine, "engine"));
    }

    /** The meters of transfers with {@code peer}; the same instance for every call with that name. */
    PeerMeters peer(String peer) {
        PeerMeters m = peers.get(peer);
        return m != null ? m : peers.computeIfAbsent(peer, p -> new PeerMeters(this, engineTags.and("peer", p)));
    }

    MeterRegistry registry() {
        return registry;
    }

    /** Remembers a meter this engine registered, for {@link #remove()}. */
    <M extends Meter> M own(M meter) {
        meters.add(meter);
        return meter;
    }

    /** Removes every meter of this engine from the registry; transfers after this are not recorded. */
    public void remove() {
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
        peers.clear();
    }
}
