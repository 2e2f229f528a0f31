package io.tcpx4j.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@link TransferMetrics} sets up its meters: latency percentiles kept in this process for registries
 * that publish them and not for Prometheus' (which computes them from the buckets), and nothing recorded or
 * registered once the meters were removed.
 */
class TransferMetricsTest {

    private static Timer latency(MeterRegistry registry) {
        PeerMeters.Recorder r = new TransferMetrics(registry, "alpha").peer("beta").recorder(0, MemoryKind.DRAM);
        for (int i = 1; i <= 100; i++) {
            r.latency.record(i, TimeUnit.MICROSECONDS);
        }
        return r.latency;
    }

    @Test
    void aRegistryThatPublishesPercentilesGetsP50P99AndP999() {
        HistogramSnapshot s = latency(new SimpleMeterRegistry()).takeSnapshot();
        assertThat(Arrays.stream(s.percentileValues()).map(ValueAtPercentile::percentile))
                .containsExactly(0.5, 0.99, 0.999);
        assertThat(s.percentileValues()[0].value(TimeUnit.MICROSECONDS)).isBetween(40.0, 60.0);
    }

    @Test
    void prometheusGetsTheBucketsAndNoPercentilesItWouldNotPublish() {
        Timer t = latency(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
        HistogramSnapshot s = t.takeSnapshot();
        assertThat(s.percentileValues()).isEmpty();
        assertThat(s.histogramCounts()).hasSizeGreaterThan(10);
        assertThat(t.count()).isEqualTo(100);
    }

    @Test
    void afterRemoveSessionsAreTheEnginesOwnAndNoMeterComesBack() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        TransferMetrics metrics = new TransferMetrics(registry, "alpha");
        Session plain = new TestSession("beta");
        TransferEngine metered = new MeteredTransferEngine(engineWith(plain), metrics);
        assertThat(metered.session("beta")).isNotSameAs(plain);
        assertThat(registry.getMeters()).isNotEmpty();

        metrics.remove();
        assertThat(registry.getMeters()).isEmpty();
        assertThat(metered.session("beta")).isSameAs(plain);
        assertThat(metered.session("gamma")).isSameAs(plain);
        assertThat(metrics.peer("delta")).isNull();
        assertThat(registry.getMeters()).isEmpty();
    }

    /** An engine double whose every session is {@code session}; any other call returns a default. */
    private static TransferEngine engineWith(Session session) {
        return (TransferEngine) Proxy.newProxyInstance(TransferMetricsTest.class.getClassLoader(),
                new Class<?>[] {TransferEngine.class},
                (proxy, method, args) -> method.getName().equals("session") ? session : null);
    }

    /** A session double that posts nothing. */
    private record TestSession(String peer) implements Session {
        @Override
        public Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Transfer read(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void notify(byte[] message) {
            throw new UnsupportedOperationException();
        }
    }
}
