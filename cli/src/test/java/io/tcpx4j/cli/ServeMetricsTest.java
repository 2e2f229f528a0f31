package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.metrics.PrometheusText;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code serve --metrics-port} and {@code bench --metrics-port}, scraped by a Prometheus text parser while
 * a two-host bench run is held between its rows and after it: the target's per-peer counters, labelled with the
 * initiator's name, and its transport counters equal the bytes and transfers the bench reports (its warm-up
 * transfers included), and the initiator's meters carry the target as their peer label, with a latency
 * histogram. The per-peer counters also count what travels inline, which the transport never sees.
 */
@Timeout(120)
class ServeMetricsTest {

    private static final String PEER = "bench-target";
    private static final long[] BLOCKS = {4096, 65536};
    private static final int ITERATIONS = 20;
    private static final int WARMUP = 3;

    @AfterEach
    void unhook() {
        Patterns.beforeVerify = null;
    }

    @Test
    void countersEqualWhatTheBenchReportsDuringAndAfterItsRun() throws Exception {
        // the target's inline limit 0: every byte travels on the data channels, which its transport counts
        try (TwoHostTest.Served s = new TwoHostTest.Served("--metrics-port", "0", "--inline-limit", "0")) {
            InetSocketAddress at = s.serve.metricsAddress();
            assertThat(at).isNotNull();
            assertThat(at.getAddress().getHostAddress()).isEqualTo("127.0.0.1");
            assertThat(s.out.toString(StandardCharsets.UTF_8))
                    .contains("tcpx4j serve: metrics on http://127.0.0.1:" + at.getPort() + "/metrics");
            String serveUrl = "http://127.0.0.1:" + at.getPort() + "/metrics";

            // serve's warm-up ran on private engines over the same transport: its bytes are the baseline
            PrometheusText before = PrometheusText.scrape(serveUrl);
            assertThat(before.find("tcpx4j_transfers_total")).as("no transfer of the warm-up's engines").isEmpty();
            assertThat(before.find("tcpx4j_served_transfers_total")).as("no peer connected yet").isEmpty();
            assertThat(before.sum("tcpx4j_engine_connections", "engine", PEER)).isZero();
            double bytesBefore = received(before, "tcpx4j_transport_bytes_total");
            double receivesBefore = received(before, "tcpx4j_transport_requests_completed_total");

            int initiatorPort;
            try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
                initiatorPort = free.getLocalPort();
            }
            String initiatorUrl = "http://127.0.0.1:" + initiatorPort + "/metrics";

            String initiatorName;
            // the target verifies each row once its last transfer landed: hold the first row there
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            AtomicBoolean first = new AtomicBoolean(true);
            Patterns.beforeVerify = (address, length) -> {
                if (first.getAndSet(false)) {
                    held.countDown();
                    try {
                        resume.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            CompletableFuture<Cli.Result> bench = CompletableFuture.supplyAsync(() -> Cli.run("bench", "--role", "initiator",
                    "--peer", s.peer(), "--op", "write", "--block-sizes", "4K,64K", "--batch-sizes", "1",
                    "--iterations", Integer.toString(ITERATIONS), "--warmup", Integer.toString(WARMUP),
                    "--warmup-seconds", "0", "--no-baseline", "--check-consistency", "--json",
                    "--metrics-port", Integer.toString(initiatorPort)));
            try {
                assertThat(held.await(60, TimeUnit.SECONDS)).as("the first row reached its check").isTrue();

                // during the run: the first row's transfers, warm-up included, and nothing of the second yet
                long firstRow = (long) (ITERATIONS + WARMUP) * BLOCKS[0];
                PrometheusText during = PrometheusText.scrape(serveUrl);
                assertThat(received(during, "tcpx4j_transport_bytes_total") - bytesBefore).isEqualTo(firstRow);
                assertThat(received(during, "tcpx4j_transport_requests_completed_total") - receivesBefore)
                        .isEqualTo(ITERATIONS + WARMUP);
                assertThat(during.sum("tcpx4j_engine_connections", "engine", PEER)).isEqualTo(1);
                assertThat(during.sum("tcpx4j_engine_regions", "engine", PEER)).isEqualTo(1);

                // the initiator: per-peer meters of its writes, the last one recorded just after it ended
                String[] write = {"peer", PEER, "op", "write", "memory", "dram"};
                PrometheusText initiator = PrometheusText.scrape(initiatorUrl);
                for (long end = System.nanoTime() + 10_000_000_000L;
                     initiator.sum("tcpx4j_transfers_total", write) < ITERATIONS + WARMUP && System.nanoTime() < end; ) {
                    Thread.sleep(5);
                    initiator = PrometheusText.scrape(initiatorUrl);
                }
                assertThat(initiator.sum("tcpx4j_transfers_total", write)).isEqualTo(ITERATIONS + WARMUP);
                assertThat(initiator.sum("tcpx4j_transfer_bytes_total", write)).isEqualTo(firstRow);
                assertThat(initiator.type("tcpx4j_transfer_latency_seconds")).isEqualTo("histogram");
                assertThat(initiator.sum("tcpx4j_transfer_latency_seconds_count", write)).isEqualTo(ITERATIONS + WARMUP);
                assertThat(initiator.histogramQuantile(0.999, "tcpx4j_transfer_latency_seconds", write)).isPositive();
                assertThat(initiator.sum("tcpx4j_transfers_in_flight", "peer", PEER)).isZero();
                assertThat(initiator.find("tcpx4j_transfers_total").stream().map(x -> x.labels().get("peer")))
                        .containsOnly(PEER);
                assertThat(initiator.sum("tcpx4j_transport_bytes_total", "direction", "send")).isEqualTo(firstRow);

                // the target's counters of what that peer, labelled with the initiator engine's name, wrote into it
                initiatorName = initiator.find("tcpx4j_transfers_total", write).get(0).labels().get("engine");
                assertThat(initiatorName).startsWith("bench-initiator");
                assertThat(during.find("tcpx4j_served_transfers_total").stream().map(x -> x.labels().get("peer")))
                        .containsOnly(initiatorName);
                String[] served = {"engine", PEER, "peer", initiatorName, "op", "write"};
                assertThat(during.type("tcpx4j_served_transfers_total")).isEqualTo("counter");
                assertThat(during.sum("tcpx4j_served_transfers_total", served)).isEqualTo(ITERATIONS + WARMUP);
                assertThat(during.sum("tcpx4j_served_bytes_total", served)).isEqualTo(firstRow);
                assertThat(during.sum("tcpx4j_served_transfers_total", "peer", initiatorName, "op", "read")).isZero();
            } finally {
                resume.countDown();
            }

            Cli.Result r = bench.get(60, TimeUnit.SECONDS);
            assertThat(r.exit()).as(r.err()).isZero();
            JsonNode doc = new ObjectMapper().readTree(r.out());
            assertThat(doc.get("settings").get("warmup").asInt()).isEqualTo(WARMUP);
            long bytes = 0;
            long transfers = 0;
            for (JsonNode row : doc.get("rows")) {
                int iterations = row.get("iterations").asInt();
                long perTransfer = row.get("blockSize").asLong() * row.get("batchSize").asLong();
                assertThat(row.get("bytes").asLong()).isEqualTo(perTransfer * iterations);
                // every row starts with its unmeasured warm-up transfers of the same shape
                bytes += row.get("bytes").asLong() + perTransfer * WARMUP;
                transfers += iterations + WARMUP;
            }
            assertThat(transfers).isEqualTo((long) BLOCKS.length * (ITERATIONS + WARMUP));

            // after the run: the target's transport received exactly those bytes, one receive per transfer
            // (each is one descriptor smaller than a chunk)
            PrometheusText after = PrometheusText.scrape(serveUrl);
            assertThat(received(after, "tcpx4j_transport_bytes_total") - bytesBefore).isEqualTo(bytes);
            assertThat(received(after, "tcpx4j_transport_requests_completed_total") - receivesBefore).isEqualTo(transfers);
            assertThat(after.sum("tcpx4j_transport_requests_failed_total")).isZero();
            assertThat(after.find("tcpx4j_transport_bytes_total", "transport", "loopback", "device", "0")).isNotEmpty();
            // the initiator is gone; its counters stay for the scrapes after it
            String[] served = {"engine", PEER, "peer", initiatorName, "op", "write"};
            assertThat(after.sum("tcpx4j_served_transfers_total", served)).isEqualTo(transfers);
            assertThat(after.sum("tcpx4j_served_bytes_total", served)).isEqualTo(bytes);
            assertThat(after.sum("tcpx4j_served_refusals_total", "engine", PEER)).isZero();
            assertThat(after.find("tcpx4j_served_refusals_total", "peer", initiatorName, "code", "NOT_ALLOWED")).hasSize(2);
        }
    }

    @Test
    void readsServedInlineAndChunkedCountPerPeerWhereTheTransportSeesOnlyTheChunked() throws Exception {
        // serve's default inline limit: a 4 KiB READ is answered in its control frame, a 64 KiB one in chunks
        try (TwoHostTest.Served s = new TwoHostTest.Served("--metrics-port", "0")) {
            String serveUrl = "http://127.0.0.1:" + s.serve.metricsAddress().getPort() + "/metrics";
            double sentBefore = PrometheusText.scrape(serveUrl).sum("tcpx4j_transport_bytes_total", "direction", "send");

            Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--op", "read",
                    "--block-sizes", "4K,64K", "--batch-sizes", "1", "--iterations", Integer.toString(ITERATIONS),
                    "--warmup", Integer.toString(WARMUP), "--warmup-seconds", "0", "--no-baseline",
                    "--check-consistency", "--json");
            assertThat(r.exit()).as(r.err()).isZero();
            long bytes = 0;
            long transfers = 0;
            long chunkedBytes = 0;
            for (JsonNode row : new ObjectMapper().readTree(r.out()).get("rows")) {
                long perTransfer = row.get("blockSize").asLong() * row.get("batchSize").asLong();
                long rowBytes = row.get("bytes").asLong() + perTransfer * WARMUP;
                bytes += rowBytes;
                transfers += row.get("iterations").asInt() + WARMUP;
                if (perTransfer > 4096) {
                    chunkedBytes += rowBytes;
                }
            }
            assertThat(chunkedBytes).isPositive().isLessThan(bytes);

            // a READ counts once the target's last send tested done, which may come just after the initiator's DONE
            PrometheusText after = PrometheusText.scrape(serveUrl);
            for (long end = System.nanoTime() + 10_000_000_000L;
                 after.sum("tcpx4j_served_transfers_total", "op", "read") < transfers && System.nanoTime() < end; ) {
                Thread.sleep(5);
                after = PrometheusText.scrape(serveUrl);
            }
            List<PrometheusText.Sample> reads = after.find("tcpx4j_served_transfers_total", "engine", PEER, "op", "read");
            assertThat(reads).hasSize(1);
            assertThat(reads.get(0).labels().get("peer")).startsWith("bench-initiator");
            assertThat(reads.get(0).value()).isEqualTo(transfers);
            assertThat(after.sum("tcpx4j_served_bytes_total", "engine", PEER, "op", "read")).isEqualTo(bytes);
            assertThat(after.sum("tcpx4j_served_transfers_total", "engine", PEER, "op", "write")).isZero();
            assertThat(after.sum("tcpx4j_transport_bytes_total", "direction", "send") - sentBefore).isEqualTo(chunkedBytes);
        }
    }

    private static double received(PrometheusText t, String name) {
        return t.sum(name, "transport", "loopback", "direction", "receive");
    }
}
