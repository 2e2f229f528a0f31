package io.tcpx4j.metrics;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.HostBuffer;
import io.tcpx4j.api.PeerStats;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.function.DoubleSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two real engines over the loopback transport, each with its meters in a Prometheus registry served over
 * HTTP: what a scrape shows equals the transfers the test made, per peer, operation and memory kind, and
 * the transports' counters show the same bytes from both sides.
 */
@Timeout(60)
class EngineMetricsTest {

    private static final Duration T = Duration.ofSeconds(10);
    private static final int BLOCK = 64 * 1024;
    private static final int SMALL = 4096;

    /** One engine with its own registry, metered transport, gauges and endpoint. */
    private static final class Metered implements AutoCloseable {
        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        final MeteredNetTransport transport;
        final Engine engine;
        final TransferMetrics transfers;
        final MeteredTransferEngine metered;
        final EngineGauges gauges;
        final PrometheusEndpoint endpoint;

        Metered(String name) throws java.io.IOException {
            transport = new MeteredNetTransport(new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false)), registry);
            // inline transfers travel in control frames: off, so that every byte shows on the transport too
            engine = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults(name).withInlineLimit(0)),
                    transport, new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
            engine.start();
            transfers = new TransferMetrics(registry, name);
            metered = new MeteredTransferEngine(engine, transfers);
            gauges = new EngineGauges(engine, registry);
            endpoint = PrometheusEndpoint.start(registry, "127.0.0.1", 0);
        }

        PrometheusText scrape() throws Exception {
            return PrometheusText.scrape("http://127.0.0.1:" + endpoint.address().getPort() + "/metrics");
        }

        @Override
        public void close() {
            endpoint.close();
            gauges.close();
            engine.close();
            transport.close();
        }
    }

    private Metered alpha;
    private Metered beta;

    @BeforeEach
    void start() throws Exception {
        alpha = new Metered("alpha");
        beta = new Metered("beta");
    }

    @AfterEach
    void stop() {
        alpha.close();
        beta.close();
    }

    @Test
    void aScrapeShowsEveryTransferPerPeerOpAndMemoryWithItsLatencyHistogram() throws Exception {
        int writes = 25;
        int reads = 7;
        try (HostBuffer local = HostBuffer.allocate(BLOCK);
             HostBuffer remote = HostBuffer.allocate(BLOCK);
             RegisteredMemory l = alpha.metered.register(local.descriptor());
             RegisteredMemory r = beta.engine.register(remote.descriptor())) {
            Session s = sessionToBeta(r);
            for (int i = 0; i < writes; i++) {
                Transfer t = s.write(List.of(local.descriptor()), List.of(remote.descriptor()), null);
                assertThat(alpha.metered.driveUntilEnded(t, T)).isEqualTo(TransferStatus.DONE);
            }
            for (int i = 0; i < reads; i++) {
                Transfer t = s.read(List.of(local.descriptor().slice(0, SMALL)), List.of(remote.descriptor().slice(0, SMALL)), null);
                assertThat(alpha.metered.driveUntilEnded(t, T)).isEqualTo(TransferStatus.DONE);
            }
            // a range outside the peer's registered memory is refused at the call
            MemoryDescriptor outside = MemoryDescriptor.dram(remote.descriptor().address() + BLOCK, SMALL);
            assertThatThrownBy(() -> s.write(List.of(local.descriptor().slice(0, SMALL)), List.of(outside), null))
                    .isInstanceOf(TransferException.class);

            // the observer runs on the thread that ends a transfer, just after the waiter may have woken
            awaitValue(() -> alpha.registry.find(TransferMetrics.TRANSFERS).tag("op", "read").counter() == null ? 0
                    : alpha.registry.find(TransferMetrics.TRANSFERS).tag("op", "read").counter().count(), reads);

            PrometheusText a = alpha.scrape();
            String[] write = {"engine", "alpha", "peer", "beta", "op", "write", "memory", "dram"};
            String[] read = {"engine", "alpha", "peer", "beta", "op", "read", "memory", "dram"};
            assertThat(a.type("tcpx4j_transfers_total")).isEqualTo("counter");
            assertThat(a.sum("tcpx4j_transfers_total", write)).isEqualTo(writes);
            assertThat(a.sum("tcpx4j_transfers_total", read)).isEqualTo(reads);
            assertThat(a.sum("tcpx4j_transfer_bytes_total", write)).isEqualTo((double) writes * BLOCK);
            assertThat(a.sum("tcpx4j_transfer_bytes_total", read)).isEqualTo((double) reads * SMALL);
            assertThat(a.type("tcpx4j_transfer_latency_seconds")).isEqualTo("histogram");
            assertThat(a.sum("tcpx4j_transfer_latency_seconds_count", write)).isEqualTo(writes);
            assertThat(a.find("tcpx4j_transfer_latency_seconds_bucket", write)).hasSizeGreaterThan(10);
            assertThat(a.sum("tcpx4j_transfer_latency_seconds_bucket", concat(write, "le", "+Inf"))).isEqualTo(writes);
            assertThat(a.sum("tcpx4j_transfer_latency_seconds_sum", write)).isPositive();
            // p50, p99 and p99.9 as Prometheus' histogram_quantile computes them from the buckets
            double p50 = a.histogramQuantile(0.5, "tcpx4j_transfer_latency_seconds", write);
            double p99 = a.histogramQuantile(0.99, "tcpx4j_transfer_latency_seconds", write);
            double p999 = a.histogramQuantile(0.999, "tcpx4j_transfer_latency_seconds", write);
            assertThat(p50).isPositive().isLessThanOrEqualTo(p99);
            assertThat(p99).isLessThanOrEqualTo(p999);
            // at most the bucket above the slowest transfer
            assertThat(p999).isLessThanOrEqualTo(a.upperBound("tcpx4j_transfer_latency_seconds",
                    a.sum("tcpx4j_transfer_latency_seconds_max", write), write));
            assertThat(a.sum("tcpx4j_transfer_errors_total", "engine", "alpha", "peer", "beta", "op", "write"))
                    .isEqualTo(1);
            assertThat(a.sum("tcpx4j_transfers_in_flight", "engine", "alpha", "peer", "beta")).isZero();
            assertThat(a.sum("tcpx4j_engine_connections", "engine", "alpha")).isEqualTo(1);
            assertThat(a.sum("tcpx4j_engine_regions", "engine", "alpha")).isEqualTo(1);

            // the transports: alpha sent the writes and received the reads, beta the other way round
            PrometheusText b = beta.scrape();
            assertThat(a.sum("tcpx4j_transport_bytes_total", "transport", "loopback", "direction", "send"))
                    .isEqualTo((double) writes * BLOCK);
            assertThat(a.sum("tcpx4j_transport_bytes_total", "direction", "receive")).isEqualTo((double) reads * SMALL);
            assertThat(b.sum("tcpx4j_transport_bytes_total", "direction", "receive")).isEqualTo((double) writes * BLOCK);
            assertThat(b.sum("tcpx4j_transport_bytes_total", "direction", "send")).isEqualTo((double) reads * SMALL);
            // one chunk per transfer (each is smaller than a chunk)
            assertThat(b.sum("tcpx4j_transport_requests_completed_total", "direction", "receive")).isEqualTo(writes);
            assertThat(b.sum("tcpx4j_transport_requests_posted_total", "direction", "receive")).isEqualTo(writes);
            assertThat(b.sum("tcpx4j_transport_requests_failed_total")).isZero();
            assertThat(b.find("tcpx4j_transport_bytes_total", "device", "0", "nic", beta.transport.properties(0).name())).isNotEmpty();
            // beta posted nothing itself: no transfer meters of its own
            assertThat(b.find("tcpx4j_transfers_total")).isEmpty();
        }
    }

    @Test
    void theTargetShowsPerPeerWhatWasWrittenIntoAndReadFromItsMemoryAndWhatItRefused() throws Exception {
        int writes = 9;
        int reads = 4;
        // a second set of beta's counters that drops a peer's series as soon as it goes
        PrometheusMeterRegistry dropping = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (EngineGauges dropsGone = new EngineGauges(beta.engine, dropping, Duration.ZERO);
             HostBuffer local = HostBuffer.allocate(BLOCK);
             HostBuffer remote = HostBuffer.allocate(2 * BLOCK);
             RegisteredMemory l = alpha.metered.register(local.descriptor());
             RegisteredMemory r = beta.engine.register(remote.descriptor().slice(0, BLOCK))) {
            String[] write = {"engine", "beta", "peer", "alpha", "op", "write"};
            String[] read = {"engine", "beta", "peer", "alpha", "op", "read"};
            assertThat(beta.scrape().find("tcpx4j_served_transfers_total")).as("no peer connected yet").isEmpty();

            alpha.metered.loadPeer("beta", beta.engine.connInfo());
            // alpha is told beta published twice what it registered: beta's own check refuses the rest
            alpha.metered.loadRemoteMetadata("beta", new io.tcpx4j.domain.protocol.RegionMetadata("beta",
                    remote.descriptor()).encode());
            Session s = alpha.metered.session("beta");
            for (int i = 0; i < writes; i++) {
                Transfer t = s.write(List.of(local.descriptor()), List.of(remote.descriptor().slice(0, BLOCK)), null);
                assertThat(alpha.metered.driveUntilEnded(t, T)).isEqualTo(TransferStatus.DONE);
            }
            for (int i = 0; i < reads; i++) {
                Transfer t = s.read(List.of(local.descriptor().slice(0, SMALL)), List.of(remote.descriptor().slice(0, SMALL)), null);
                assertThat(alpha.metered.driveUntilEnded(t, T)).isEqualTo(TransferStatus.DONE);
            }
            Transfer refused = s.write(List.of(local.descriptor()), List.of(remote.descriptor().slice(BLOCK, BLOCK)), null);
            assertThat(alpha.metered.driveUntilEnded(refused, T)).isEqualTo(TransferStatus.FAILED);
            // a READ counts once the target's last send tested done, which may come just after the initiator's DONE
            awaitValue(() -> beta.engine.peerStats().get(0).reads(), reads);

            PrometheusText b = beta.scrape();
            assertThat(b.type("tcpx4j_served_transfers_total")).isEqualTo("counter");
            assertThat(b.type("tcpx4j_served_bytes_total")).isEqualTo("counter");
            assertThat(b.sum("tcpx4j_served_transfers_total", write)).isEqualTo(writes);
            assertThat(b.sum("tcpx4j_served_bytes_total", write)).isEqualTo((double) writes * BLOCK);
            assertThat(b.sum("tcpx4j_served_transfers_total", read)).isEqualTo(reads);
            assertThat(b.sum("tcpx4j_served_bytes_total", read)).isEqualTo((double) reads * SMALL);
            assertThat(b.sum("tcpx4j_served_refusals_total", concat(write, "code", "NOT_ALLOWED"))).isEqualTo(1);
            assertThat(b.sum("tcpx4j_served_refusals_total", concat(read, "code", "NOT_ALLOWED"))).isZero();
            assertThat(b.find("tcpx4j_served_refusals_total", "peer", "alpha")).hasSize(2 * PeerStats.REFUSAL_CODES.size());
            // what beta did itself is alpha's to count: alpha served nothing
            PrometheusText a = alpha.scrape();
            assertThat(a.sum("tcpx4j_served_transfers_total", "engine", "alpha", "peer", "beta")).isZero();
            assertThat(a.find("tcpx4j_served_transfers_total", "engine", "alpha", "peer", "beta")).hasSize(2);

            // alpha goes: the default keeps its last counts for the next scrapes, the other drops them
            assertThat(PrometheusText.parse(dropping.scrape()).sum("tcpx4j_served_transfers_total", write)).isEqualTo(writes);
            alpha.metered.disconnect("beta");
            // the agent thread removes the peer's meters one by one: wait until the last kind is gone too
            awaitValue(() -> dropping.find(EngineGauges.SERVED_TRANSFERS).meters().isEmpty()
                    && dropping.find(EngineGauges.SERVED_BYTES).meters().isEmpty()
                    && dropping.find(EngineGauges.SERVED_REFUSALS).meters().isEmpty() ? 1 : 0, 1);
            PrometheusText dropped = PrometheusText.parse(dropping.scrape());
            assertThat(dropped.find("tcpx4j_served_transfers_total")).isEmpty();
            assertThat(dropped.find("tcpx4j_served_bytes_total")).isEmpty();
            assertThat(dropped.find("tcpx4j_served_refusals_total")).isEmpty();
            assertThat(dropped.find("tcpx4j_engine_connections")).hasSize(1);
            PrometheusText kept = beta.scrape();
            assertThat(kept.sum("tcpx4j_served_bytes_total", write)).isEqualTo((double) writes * BLOCK);
            assertThat(kept.sum("tcpx4j_served_transfers_total", read)).isEqualTo(reads);
        }
    }

    @Test
    void aPeerTheTargetForgotAndKnowsAgainCountsFromZeroInItsSeries() throws Exception {
        try (HostBuffer local = HostBuffer.allocate(SMALL);
             HostBuffer remote = HostBuffer.allocate(SMALL);
             RegisteredMemory l = alpha.metered.register(local.descriptor());
             RegisteredMemory r = beta.engine.register(remote.descriptor())) {
            String[] write = {"engine", "beta", "peer", "alpha", "op", "write"};
            Session s = sessionToBeta(r);
            for (int i = 0; i < 3; i++) {
                Transfer t = s.write(List.of(local.descriptor()), List.of(remote.descriptor()), null);
                assertThat(alpha.metered.driveUntilEnded(t, T)).isEqualTo(TransferStatus.DONE);
            }
            assertThat(beta.scrape().sum("tcpx4j_served_transfers_total", write)).isEqualTo(3);

            // beta only admitted alpha: once alpha has gone, beta forgets it, and the series keeps the last counts
            alpha.metered.disconnect("beta");
            awaitValue(() -> beta.engine.peerStats().isEmpty() ? 1 : 0, 1);
            assertThat(beta.engine.peerStats()).isEmpty();
            assertThat(beta.scrape().sum("tcpx4j_served_transfers_total", write)).isEqualTo(3);

            // alpha comes back: new counters under the same series
            Transfer again = s.write(List.of(local.descriptor()), List.of(remote.descriptor()), null);
            assertThat(alpha.metered.driveUntilEnded(again, T)).isEqualTo(TransferStatus.DONE);
            PrometheusText b = beta.scrape();
            assertThat(b.find("tcpx4j_served_transfers_total", write)).hasSize(1);
            assertThat(b.sum("tcpx4j_served_transfers_total", write)).as("counted from zero again").isEqualTo(1);
        }
    }

    @Test
    void removedMetersLeaveTheScrape() throws Exception {
        try (HostBuffer local = HostBuffer.allocate(SMALL);
             HostBuffer remote = HostBuffer.allocate(SMALL);
             RegisteredMemory l = alpha.metered.register(local.descriptor());
             RegisteredMemory r = beta.engine.register(remote.descriptor())) {
            Transfer t = sessionToBeta(r).write(List.of(local.descriptor()), List.of(remote.descriptor()), null);
            assertThat(alpha.metered.driveUntilEnded(t, T)).isEqualTo(TransferStatus.DONE);
            awaitValue(() -> alpha.registry.find(TransferMetrics.TRANSFERS).counter() == null ? 0
                    : alpha.registry.find(TransferMetrics.TRANSFERS).counter().count(), 1);
            assertThat(alpha.scrape().find("tcpx4j_transfers_total", "peer", "beta")).hasSize(1);

            alpha.transfers.remove();
            alpha.gauges.close();
            alpha.transport.removeMeters();
            PrometheusText after = alpha.scrape();
            assertThat(after.samples()).noneMatch(s -> s.name().startsWith("tcpx4j_"));
        }
    }

    /** Alpha learns beta's conn-info and its region {@code r}, then opens a session to it. */
    private Session sessionToBeta(RegisteredMemory r) {
        alpha.metered.loadPeer("beta", beta.engine.connInfo());
        alpha.metered.loadRemoteMetadata("beta", r.publicMetadata());
        return alpha.metered.session("beta");
    }

    private static String[] concat(String[] labels, String... more) {
        String[] out = java.util.Arrays.copyOf(labels, labels.length + more.length);
        System.arraycopy(more, 0, out, labels.length, more.length);
        return out;
    }

    /** Waits (bounded) until {@code value} reaches {@code expected}; the assertions after it decide. */
    private static void awaitValue(DoubleSupplier value, double expected) throws InterruptedException {
        long deadline = System.nanoTime() + T.toNanos();
        while (value.getAsDouble() < expected && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
    }
}
