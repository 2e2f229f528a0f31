package io.tcpx4j.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The meters of one engine's transfers with one peer. Meters are looked up by tags once, when first
 * needed, and then held here: recording a transfer costs no tag lookup.
 *
 * <p>Thread-safe.
 */
final class PeerMeters {

    private static final MemoryKind[] KINDS = MemoryKind.values();
    private static final TransferException.Code[] CODES = TransferException.Code.values();

    private final TransferMetrics owner;
    private final Tags tags;
    /** Per (op, memory kind): index {@code op * KINDS.length + kind}. */
    private final AtomicReferenceArray<Recorder> recorders = new AtomicReferenceArray<>(2 * KINDS.length);
    /** Per (op, code): index {@code op * CODES.length + code}. */
    private final AtomicReferenceArray<Counter> errors = new AtomicReferenceArray<>(2 * CODES.length);
    /**
     * Transfers posted, counted by the posting threads, and ended, counted by the thread that ends them: two
     * adders rather than one number that both sides change, so that neither takes the other's cache line.
     */
    final LongAdder posted = new LongAdder();
    final LongAdder ended = new LongAdder();

    PeerMeters(TransferMetrics owner, Tags tags) {
        this.owner = owner;
        this.tags = tags;
        owner.own(Gauge.builder(TransferMetrics.IN_FLIGHT, this, PeerMeters::inFlight)
                .description("transfers posted and not yet ended").tags(tags).register(owner.registry()));
    }

    /** Transfers posted and not yet ended; ends are read first, so the figure is never below zero. */
    private double inFlight() {
        long e = ended.sum();
        return posted.sum() - e;
    }

    /** Where transfers of {@code op} (0 write, 1 read) from local memory of {@code kind} are recorded. */
    Recorder recorder(int op, MemoryKind kind) {
        int i = op * KINDS.length + kind.ordinal();
        Recorder r = recorders.get(i);
        if (r == null) {
            recorders.compareAndSet(i, null, new Recorder(op, kind));
            r = recorders.get(i);
        }
        return r;
    }

    /** Counts a transfer of {@code op} that failed with {@code code}. */
    void error(int op, TransferException.Code code) {
        int i = op * CODES.length + code.ordinal();
        Counter c = errors.get(i);
        if (c == null) {
            // registering twice returns the same meter, so a lost race is harmless
            c = owner.own(Counter.builder(TransferMetrics.ERRORS).description("transfers that failed, by code")
                    .tags(tags).tag("op", opName(op)).tag("code", code.name()).register(owner.registry()));
            errors.compareAndSet(i, null, c);
        }
        c.increment();
    }

    static String opName(int op) {
        return op == 0 ? "write" : "read";
    }

    /** The meters of one (op, memory kind). */
    final class Recorder {
        final Counter transfers;
        final Counter bytes;
        final Timer latency;
        final int op;

        private Recorder(int op, MemoryKind kind) {
            this.op = op;
            Tags t = tags.and("op", opName(op)).and("memory", kind.name().toLowerCase(Locale.ROOT));
            transfers = owner.own(Counter.builder(TransferMetrics.TRANSFERS).description("transfers that ended DONE")
                    .tags(t).register(owner.registry()));
            bytes = owner.own(Counter.builder(TransferMetrics.BYTES).baseUnit("bytes")
                    .description("bytes of the transfers that ended DONE").tags(t).register(owner.registry()));
            Timer.Builder timer = Timer.builder(TransferMetrics.LATENCY)
                    .description("from the write or read call until the transfer ended DONE")
                    .tags(t)
                    .publishPercentileHistogram()
                    .minimumExpectedValue(Duration.ofNanos(1_000))
                    .maximumExpectedValue(Duration.ofSeconds(60));
            if (owner.keepsPercentiles()) {
                timer.publishPercentiles(TransferMetrics.PERCENTILES);
            }
            this.latency = owner.own(timer.register(owner.registry()));
        }

        PeerMeters peer() {
            return PeerMeters.this;
        }
    }
}
