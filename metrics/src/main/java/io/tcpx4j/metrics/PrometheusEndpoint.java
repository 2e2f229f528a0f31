package io.tcpx4j.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Serves a {@link PrometheusMeterRegistry} as Prometheus text (format 0.0.4) at {@code GET /metrics} over
 * plain HTTP, on one daemon thread of its own (the JDK's {@code com.sun.net.httpserver}). Every other path
 * is 404 and every other method 405. Bind it to a loopback or otherwise trusted interface: it has no
 * authentication.
 *
 * <p>Thread-safe.
 */
public final class PrometheusEndpoint implements AutoCloseable {

    /** The content type of Prometheus' text format. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService thread;

    private PrometheusEndpoint(HttpServer server, ExecutorService thread) {
        this.server = server;
        this.thread = thread;
    }

    /**
     * Listens on {@code host:port} (port 0: any free port) and serves {@code registry}.
     *
     * @throws IOException when the address cannot be bound
     */
    public static PrometheusEndpoint start(PrometheusMeterRegistry registry, String host, int port) throws IOException {
        Objects.requireNonNull(registry, "registry");
        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 16);
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "tcpx4j-metrics-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(thread);
        server.createContext("/", exchange -> handle(exchange, registry));
        server.start();
        return new PrometheusEndpoint(server, thread);
    }

    private static void handle(HttpExchange exchange, PrometheusMeterRegistry registry) throws IOException {
        try (exchange) {
            if (!"/metrics".equals(exchange.getRequestURI().getPath())) {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            if ("HEAD".equals(exchange.getRequestMethod())) {
                exchange.sendResponseHeaders(200, -1);
                return;
            }
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** The address it listens on (the real port when started with 0). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /** Stops listening and ends its thread. Idempotent. */
    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
    }
}
