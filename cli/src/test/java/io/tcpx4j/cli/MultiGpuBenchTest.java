package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bench runs whose sides spread their buffers over several GPUs, on a host of two GPUs made of host
 * memory ({@link HostGpusDouble}): embedded and two-host (with {@code serve} and {@code --role target});
 * fleet runs are in {@link FleetBenchTest}. Every byte is checked on every GPU, the report names each side's
 * GPUs and the bytes checked on each, and a corrupted byte fails the check.
 */
@Timeout(240)
class MultiGpuBenchTest {

    private static final GpuHost TWO = new HostGpusDouble(2);
    private static final String[] SHORT = {"--block-sizes", "4K,64K", "--iterations", "6", "--warmup", "1",
            "--warmup-seconds", "0", "--no-baseline", "--check-consistency", "--json"};

    @AfterEach
    void noHook() {
        Patterns.beforeVerify = null;
    }

    static String[] bench(String... flags) {
        List<String> a = new ArrayList<>(List.of("bench"));
        a.addAll(List.of(flags));
        a.addAll(List.of(SHORT));
        return a.toArray(String[]::new);
    }

    static JsonNode json(Cli.Result r) throws Exception {
        assertThat(r.exit()).as(r.err()).isZero();
        return new ObjectMapper().readTree(r.out());
    }

    static List<Integer> ints(JsonNode array) {
        List<Integer> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asInt()));
        return out;
    }

    /**
     * Every row checked with no mismatch, and the bytes checked on each GPU of the receiving side (the
     * target of a WRITE, the initiator of a READ): its {@code slots} x batch blocks of the row, each GPU's
     * share as the round robin over the side's GPUs in their order gives it.
     */
    static void everyByteOnEveryGpu(JsonNode doc, int slots) {
        JsonNode settings = doc.get("settings");
        List<Integer> gpus = ints(settings.get("write".equals(settings.get("op").asText()) ? "targetDevices"
                : "initiatorDevices"));
        assertThat(doc.get("mismatches").asLong()).isZero();
        assertThat(doc.get("rows")).isNotEmpty();
        for (JsonNode row : doc.get("rows")) {
            assertThat(row.get("mismatches").asLong()).isZero();
            long block = row.get("blockSize").asLong();
            long blocks = (long) row.get("batchSize").asInt() * slots;
            JsonNode checked = row.get("checkedBytesPerGpu");
            assertThat(checked).as(row.toString()).isNotNull();
            assertThat(checked.size()).isEqualTo(gpus.size());
            for (int i = 0; i < gpus.size(); i++) {
                long here = (blocks - 1 - i) / gpus.size() + 1;
                assertThat(checked.get(String.valueOf(gpus.get(i))).asLong()).as("GPU %d of %s", gpus.get(i), row)
                        .isEqualTo(here * block);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"write", "read"})
    void anEmbeddedRunOverTwoGpusPerSideChecksEveryByteOnBoth(String op) throws Exception {
        JsonNode doc = json(Cli.run(TWO, bench("--op", op, "--mem", "vram", "--mode", "mg", "--device-list", "0,1",
                "--num-initiator-dev", "2", "--num-target-dev", "2", "--batch-sizes", "2,3")));
        assertThat(ints(doc.get("settings").get("initiatorDevices"))).containsExactly(0, 1);
        assertThat(ints(doc.get("settings").get("targetDevices"))).containsExactly(0, 1);
        everyByteOnEveryGpu(doc, 1);
        assertThat(doc.get("rows")).hasSize(4);
    }

    @Test
    void sidesOfDifferentGpuCountsAndSlotsOfTheirOwnMeetBlockForBlock() throws Exception {
        // the initiator on GPU 1 alone, the target over GPUs 1 and 0; batch 1 with 2 x 2 slots
        Cli.Result r = Cli.run(TWO, bench("--mem", "vram", "--mode", "mg", "--device-list", "1,0",
                "--num-initiator-dev", "1", "--num-target-dev", "2", "--num-threads", "2", "--pipeline-depth", "2"));
        JsonNode doc = json(r);
        assertThat(ints(doc.get("settings").get("initiatorDevices"))).containsExactly(1);
        assertThat(ints(doc.get("settings").get("targetDevices"))).containsExactly(1, 0);
        everyByteOnEveryGpu(doc, 4);
        Cli.Result table = Cli.run(TWO, "bench", "--mem", "vram", "--mode", "mg", "--device-list", "1,0",
                "--num-initiator-dev", "1", "--num-target-dev", "2", "--batch-sizes", "2", "--block-sizes", "4K",
                "--iterations", "2", "--warmup-seconds", "0", "--no-baseline");
        assertThat(table.exit()).as(table.err()).isZero();
        assertThat(table.out().lines().findFirst().orElseThrow())
                .contains("write vram over loopback (embedded), initiator on GPU 1, target on GPUs 1,0, ");
    }

    @Test
    void aCorruptedByteOnAGpuFailsTheCheck() {
        Patterns.beforeVerify = (address, length) -> NativeMemory.putByte(address, (byte) ~NativeMemory.getByte(address));
        Cli.Result r = Cli.run(TWO, "bench", "--mem", "vram", "--mode", "mg", "--num-initiator-dev", "2",
                "--num-target-dev", "2", "--batch-sizes", "2", "--block-sizes", "4K", "--iterations", "2",
                "--warmup-seconds", "0", "--no-baseline", "--check-consistency");
        assertThat(r.exit()).as(r.err()).isEqualTo(BenchCommand.EXIT_MISMATCH);
        // one flipped byte per checked block: one block on each GPU
        assertThat(r.err()).contains("consistency check FAILED: 2 destination bytes differ");
    }

    /** A serve command on a thread, on {@link #TWO}. */
    private static final class Served implements AutoCloseable {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final ServeCommand serve;
        final CompletableFuture<Integer> exit;

        Served(String... flags) throws InterruptedException {
            CommandLine cl = Main.commandLine(Cli.io(out, err, Map.of()), TWO);
            serve = cl.getSubcommands().get("serve").getCommand();
            serve.installSignalHandlers = false;
            List<String> args = new ArrayList<>(List.of("serve", "--listen", "127.0.0.1:0"));
            args.addAll(List.of(flags));
            exit = CompletableFuture.supplyAsync(() -> cl.execute(args.toArray(String[]::new)));
            assertThat(serve.awaitReady(30, TimeUnit.SECONDS)).isTrue();
            assertThat(serve.address()).as(err.toString(StandardCharsets.UTF_8)).isNotNull();
        }

        @Override
        public void close() throws Exception {
            serve.shutdown();
            assertThat(exit.get(30, TimeUnit.SECONDS)).as(err.toString(StandardCharsets.UTF_8)).isZero();
        }
    }

    @Test
    void aTwoHostRunAsksTheTargetForItsGpusAndLearnsThemFromItsBuffers() throws Exception {
        try (Served s = new Served("--mem", "vram", "--device-list", "1,0")) {
            for (String op : new String[] {"write", "read"}) {
                JsonNode doc = json(Cli.run(TWO, bench("--role", "initiator", "--peer", s.serve.address().toString(),
                        "--op", op, "--mem", "vram", "--mode", "mg", "--num-initiator-dev", "2",
                        "--num-target-dev", "2", "--batch-sizes", "1,3", "--pipeline-depth", "2")));
                assertThat(ints(doc.get("settings").get("initiatorDevices"))).containsExactly(0, 1);
                assertThat(ints(doc.get("settings").get("targetDevices"))).as("as its buffers say").containsExactly(1, 0);
                everyByteOnEveryGpu(doc, 2);
            }
            // a run of one target GPU takes the first of the list
            JsonNode one = json(Cli.run(TWO, bench("--role", "initiator", "--peer", s.serve.address().toString(),
                    "--mem", "vram")));
            assertThat(ints(one.get("settings").get("targetDevices"))).containsExactly(1);
            // more than it offers: the target says why
            Cli.Result more = Cli.run(TWO, bench("--role", "initiator", "--peer", s.serve.address().toString(),
                    "--mem", "vram", "--mode", "mg", "--num-target-dev", "3", "--batch-sizes", "3"));
            assertThat(more.exit()).isEqualTo(1);
            assertThat(more.errLines()).hasSize(1);
            assertThat(more.err()).contains("this target offers 2 GPUs (--device-list 1,0), the initiator asked for 3"
                    + " (--num-target-dev)");
            assertThat(s.out.toString(StandardCharsets.UTF_8)).contains(", GPUs 1,0); Ctrl-C stops");
            assertThat(s.err.toString(StandardCharsets.UTF_8)).contains("-byte buffers on GPUs 1,0");
        }
    }

    @Test
    void aHostMemoryTargetRefusesARunOverSeveralGpus() throws Exception {
        try (Served s = new Served()) {
            Cli.Result r = Cli.run(TWO, bench("--role", "initiator", "--peer", s.serve.address().toString(),
                    "--target-seg-type", "vram", "--mode", "mg", "--num-target-dev", "2", "--batch-sizes", "2"));
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).contains("this target serves --mem dram");
        }
    }

    @Test
    void aTargetGivenItsGpuCountServesOnlyRunsOfThatCount() throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        String listen = "127.0.0.1:" + port;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Integer> target = CompletableFuture.supplyAsync(() -> Main.commandLine(
                Cli.io(out, err, Map.of()), TWO).execute("bench", "--role", "target", "--listen", listen, "--mem",
                "vram", "--mode", "mg", "--num-target-dev", "2"));
        Cli.Result one = Cli.run(TWO, bench("--role", "initiator", "--peer", listen, "--mem", "vram"));
        assertThat(one.exit()).isEqualTo(1);
        assertThat(one.err()).contains("this target runs --num-target-dev 2, the initiator asked for 1");
        JsonNode two = json(Cli.run(TWO, bench("--role", "initiator", "--peer", listen, "--mem", "vram", "--mode",
                "mg", "--num-target-dev", "2", "--batch-sizes", "2")));
        everyByteOnEveryGpu(two, 1);
        assertThat(target.get(30, TimeUnit.SECONDS)).as(err.toString(StandardCharsets.UTF_8)).isZero();
    }

    @Test
    void aTargetThatServesOneBufferWhereSeveralWereAskedFailsTheRunInOneLine() throws Exception {
        // what a target that does not know the request does: one buffer, whatever was asked
        try (java.net.ServerSocket server = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> fake = CompletableFuture.runAsync(() -> {
                try (java.net.Socket s = server.accept(); OobChannel c = new OobChannel(s)) {
                    OobMessage hello = c.receive(java.time.Duration.ofSeconds(10));
                    assertThat(hello.devicesAsked()).isEqualTo(2);
                    c.send(OobMessage.welcome("old-target", new byte[] {1}, List.of(new byte[] {2}),
                            java.time.Duration.ofSeconds(10), 2));
                    c.receive(java.time.Duration.ofSeconds(10));
                } catch (java.io.IOException e) {
                    // the initiator closes the connection when it gives up: the end of this script
                }
            });
            Cli.Result r = Cli.run(TWO, bench("--role", "initiator", "--peer", "127.0.0.1:" + server.getLocalPort(),
                    "--mem", "vram", "--mode", "mg", "--num-target-dev", "2", "--batch-sizes", "2"));
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.errLines()).as(r.err()).hasSize(1);
            assertThat(r.err()).contains("registered 1 buffer(s) for a run that asked for 2 GPUs (--num-target-dev);"
                    + " is it an older tcpx4j?");
            fake.get(30, TimeUnit.SECONDS);
        }
    }
}
