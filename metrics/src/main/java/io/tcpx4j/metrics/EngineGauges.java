package io.tcpx4j.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.tcpx4j.api.TransferEngine;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Gauges read from an engine's own counters ({@link Engine#stats()}) at each scrape, tagged
 * {@code engine}: {@code tcpx4j.engine.connections}, {@code tcpx4j.engine.requests.outstanding} (transport
 * requests), {@code tcpx4j.engine.operations.live} (operations in flight on its connections: the transfers it
 * posted and those peers posted into it), {@code tcpx4j.engine.regions} and {@code tcpx4j.engine.notifications.queued}. They hold the
 * engine strongly until {@link #close()} removes them.
 *
 * <p>Thread-safe.
 */
public final class EngineGauges implements AutoCloseable {

    private final MeterRegistry registry;
    private final List<Meter> gauges = new ArrayList<>();

    public EngineGauges(TransferEngine engine, MeterRegistry registry) {
        Objects.requireNonNull(engine, "engine");
        this.registry = Objects.requireNonNull(registry, "registry");
        Tags tags = Tags.of("engine", engine.name());
        gauge("tcpx4j.engine.connections", "connections to peers", engine, tags, e -> e.stats().connections());
        gauge("tcpx4j.engine.requests.outstanding", "transport requests posted and not yet completed", engine, tags,
                e -> e.stats().outstandingRequests());
        gauge("tcpx4j.engine.operations.live", "operations in flight on the engine's connections, posted here or by peers", engine, tags,
                e -> e.stats().liveOperations());
        gauge("tcpx4j.engine.regions", "registered memory regions", engine, tags, e -> e.stats().registeredRegions());
        gauge("tcpx4j.engine.notifications.queued", "notifications received and not yet drained", engine, tags,
                e -> e.stats().notificationsQueued());
    }

    private void gauge(String name, String description, TransferEngine engine, Tags tags,
                       ToDoubleFunction<TransferEngine> f) {
        gauges.add(Gauge.builder(name, engine, f).description(description).tags(tags).strongReference(true)
                .register(registry));
    }

    /** Removes the gauges from the registry. Idempotent. */
    @Override
    public synchronized void close() {
        for (Meter g : gauges) {
            registry.remove(g);
        }
        gauges.clear();
    }
}
