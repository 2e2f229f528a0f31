package io.tcpx4j.it.gpu;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.cli.Main;
import io.tcpx4j.cuda.Cuda;
import io.tcpx4j.cuda.GpuTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code tcpx4j bench} with each side's buffers on two GPUs ({@code --mode mg}), in this JVM over the
 * loopback transport: every row checked ({@code --check-consistency}) with no byte wrong, and bytes
 * checked on GPU 0 and on GPU 1 as the CUDA driver reports the GPU of each buffer, in the shares the
 * round robin of a row's blocks gives them. Needs two GPUs: skipped (not passed) with fewer.
 */
@GpuTest
class MultiGpuBenchTest {

    private static final String[] ROWS = {"--block-sizes", "4K,1M", "--batch-sizes", "2,5", "--iterations", "8",
            "--warmup", "1", "--warmup-seconds", "0", "--no-baseline", "--check-consistency", "--json"};

    @BeforeEach
    void twoGpus() {
        assumeTrue(Cuda.deviceCount() >= 2, "needs 2 GPUs, this host has " + Cuda.deviceCount());
    }

    private record Result(int exit, String out, String err) {
    }

    private static Result bench(String... flags) {
        List<String> args = new ArrayList<>(List.of("bench"));
        args.addAll(List.of(flags));
        args.addAll(List.of(ROWS));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.run(args.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static List<Integer> ints(JsonNode array) {
        List<Integer> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asInt()));
        return out;
    }

    /**
     * No byte wrong in any row, and on each GPU of the side that received (the target of a WRITE, the
     * initiator of a READ) its share of the row's {@code slots} x batch blocks checked.
     */
    private static void everyByteOnBothGpus(Result r, int slots) throws Exception {
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode doc = new ObjectMapper().readTree(r.out());
        JsonNode settings = doc.get("settings");
        List<Integer> gpus = ints(settings.get("write".equals(settings.get("op").asText()) ? "targetDevices"
                : "initiatorDevices"));
        assertThat(gpus).containsExactlyInAnyOrder(0, 1);
        assertThat(doc.get("mismatches").asLong()).isZero();
        assertThat(doc.get("rows")).hasSize(4);
        for (JsonNode row : doc.get("rows")) {
            assertThat(row.get("mismatches").asLong()).as(row.toString()).isZero();
            long blocks = (long) row.get("batchSize").asInt() * slots;
            JsonNode checked = row.get("checkedBytesPerGpu");
            assertThat(checked).as(row.toString()).isNotNull();
            for (int i = 0; i < gpus.size(); i++) {
                long share = (blocks - 1 - i) / gpus.size() + 1;
                assertThat(checked.path(String.valueOf(gpus.get(i))).asLong()).as("GPU %d, %s", gpus.get(i), row)
                        .isEqualTo(share * row.get("blockSize").asLong());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"write", "read"})
    void anEmbeddedRunOverTwoGpusPerSideLandsEveryByteOnBoth(String op) throws Exception {
        Result r = bench("--op", op, "--mem", "vram", "--mode", "mg", "--device-list", "0,1", "--num-initiator-dev",
                "2", "--num-target-dev", "2");
        everyByteOnBothGpus(r, 1);
    }

    @Test
    void aTwoSidedRunMovesBytesBetweenGpusThroughTheOutOfBandProtocol() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        String listen = "127.0.0.1:" + port;
        ByteArrayOutputStream targetErr = new ByteArrayOutputStream();
        // the target over GPUs 1 and 0, the initiator on GPU 0 alone: half the blocks cross GPUs
        CompletableFuture<Integer> target = CompletableFuture.supplyAsync(() -> Main.run(
                new String[] {"bench", "--role", "target", "--listen", listen, "--mem", "vram", "--device-list", "1,0"},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(targetErr, true, StandardCharsets.UTF_8)));
        Result r = bench("--role", "initiator", "--peer", listen, "--mem", "vram", "--mode", "mg",
                "--num-target-dev", "2", "--pipeline-depth", "2");
        everyByteOnBothGpus(r, 2);
        JsonNode settings = new ObjectMapper().readTree(r.out()).get("settings");
        assertThat(ints(settings.get("initiatorDevices"))).containsExactly(0);
        assertThat(ints(settings.get("targetDevices"))).containsExactly(1, 0);
        assertThat(target.get(60, TimeUnit.SECONDS)).as(targetErr.toString(StandardCharsets.UTF_8)).isZero();
    }
}
