package io.tcpx4j.cli;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.metrics.EngineGauges;
import io.tcpx4j.metrics.MeteredNetTransport;
import io.tcpx4j.metrics.MeteredTransferEngine;
import io.tcpx4j.metrics.PrometheusEndpoint;
import io.tcpx4j.metrics.TransferMetrics;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * The meters of one command's engines ({@code --metrics-port}): one Prometheus registry, served at
 * {@code http://HOST:PORT/metrics} while at least one engine that uses it is open. Engines are metered by
 * the decorators of the metrics module: the transport from its injector on ({@link #transport}), the engine
 * once it has started and finished its warm-up ({@link #engine}), so that the warm-up's private engines
 * never show in the engine's meters.
 *
 * <p>Thread-safe.
 */
final class CliMetrics {

    private final String host;
    private final int port;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private PrometheusEndpoint endpoint;
    private int users;

    CliMetrics(String host, int port) {
        this.host = Objects.requireNonNull(host, "host");
        this.port = port;
    }

    /** Serves the registry from the first user on. */
    synchronized void acquire() {
        if (users++ == 0) {
            try {
                endpoint = PrometheusEndpoint.start(registry, host, port);
            } catch (IOException | RuntimeException e) {
                users--;
                throw new Unavailable("cannot serve metrics on " + host + ":" + port + " (--metrics-bind, --metrics-port): "
                        + Main.shortCause(e));
            }
        }
    }

    /** Stops serving when the last user is done. */
    synchronized void release() {
        if (users > 0 && --users == 0) {
            endpoint.close();
            endpoint = null;
        }
    }

    /** Where the registry is served, while it is. */
    synchronized InetSocketAddress address() {
        return endpoint == null ? null : endpoint.address();
    }

    /** The transport, counting its requests and bytes per device into this registry. */
    NetTransport transport(NetTransport raw) {
        return new MeteredNetTransport(raw, registry);
    }

    /** An engine's meters; {@link Metered#close()} removes them. */
    Metered engine(TransferEngine engine) {
        TransferMetrics transfers = new TransferMetrics(registry, engine.name());
        return new Metered(new MeteredTransferEngine(engine, transfers), transfers, new EngineGauges(engine, registry));
    }

    /** A metered engine: transfers posted through {@link #engine()} are recorded. */
    record Metered(TransferEngine engine, TransferMetrics transfers, EngineGauges gauges) implements AutoCloseable {
        @Override
        public void close() {
            gauges.close();
            transfers.remove();
        }
    }
}
