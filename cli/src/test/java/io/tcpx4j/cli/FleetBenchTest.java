package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.tcpx4j.cli.fleet.LocalEtcd;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fleet runs of in-process workers ({@code bench --etcd-endpoints}) against a real etcd: the checks
 * catch a corrupted byte on every worker, workers with other settings are refused, and the fleet
 * flags are validated like every other bench flag.
 */
@Timeout(240)
class FleetBenchTest {

    @RegisterExtension
    static final LocalEtcd.PerClass etcd = new LocalEtcd.PerClass();

    @AfterEach
    void noHook() {
        Patterns.beforeVerify = null;
    }

    /** Runs one worker per argument list, each on a thread of its own, and waits for all. */
    private static List<Cli.Result> workers(List<List<String>> args) throws Exception {
        List<CompletableFuture<Cli.Result>> runs = new ArrayList<>();
        for (List<String> a : args) {
            CompletableFuture<Cli.Result> f = new CompletableFuture<>();
            new Thread(() -> f.complete(Cli.run(a.toArray(String[]::new))), "worker").start();
            runs.add(f);
        }
        List<Cli.Result> results = new ArrayList<>();
        for (CompletableFuture<Cli.Result> f : runs) {
            results.add(f.get(200, TimeUnit.SECONDS));
        }
        return results;
    }

    private static List<String> worker(String group, String... more) {
        List<String> a = new ArrayList<>(List.of("bench", "--etcd-endpoints", etcd.url().toString(),
                "--benchmark-group", group, "--block-sizes", "4K,64K", "--iterations", "10", "--warmup", "1",
                "--warmup-seconds", "0"));
        a.addAll(List.of(more));
        return a;
    }

    @ParameterizedTest
    @ValueSource(strings = {"write", "read"})
    void aCorruptedByteFailsTheCheckOnEveryWorker(String op) throws Exception {
        Patterns.beforeVerify = (address, length) -> NativeMemory.putByte(address, (byte) ~NativeMemory.getByte(address));
        List<Cli.Result> results = workers(List.of(
                worker("corrupt-" + op, "--op", op, "--check-consistency"),
                worker("corrupt-" + op, "--op", op, "--check-consistency")));
        for (Cli.Result r : results) {
            assertThat(r.exit()).as(r.err()).isEqualTo(BenchCommand.EXIT_MISMATCH);
            // one flipped byte per checked row, two rows
            assertThat(r.err()).contains("consistency check FAILED: 2 destination bytes differ");
            assertThat(r.out()).contains("(fleet)").contains("Mismatches");
        }
    }

    @Test
    void aWorkerWithOtherSettingsIsRefusedByEveryWorker() throws Exception {
        List<Cli.Result> results = workers(List.of(worker("mixed"), worker("mixed", "--op", "read")));
        for (Cli.Result r : results) {
            assertThat(r.exit()).as(r.err()).isEqualTo(1);
            assertThat(r.err()).contains("runs other settings than rank").contains("pairwise x2, read dram")
                    .contains("pairwise x2, write dram");
        }
    }

    @Test
    void pairwiseRunsOfFourWorkersReportBothPairs() throws Exception {
        List<List<String>> four = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            four.add(worker("pairs", "--workers", "4", "--check-consistency", "--json"));
        }
        List<Cli.Result> results = workers(four);
        for (Cli.Result r : results) {
            assertThat(r.exit()).as(r.err()).isZero();
            // two pairs, ten 4 KiB transfers each
            assertThat(r.out()).contains("\"bytes\" : " + 2 * 10 * 4096).contains("\"mismatches\" : 0");
        }
        assertThat(results.stream().map(Cli.Result::err).toList())
                .anyMatch(e -> e.contains("rank 2 of 4") && e.contains("initiator of rank 3"))
                .anyMatch(e -> e.contains("rank 1 of 4") && e.contains("target of rank 0"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "--scheme manytoone|--scheme is for fleet runs: add --etcd-endpoints URL",
            "--workers 3|--workers is for fleet runs",
            "--etcd-endpoints http://127.0.0.1:2379 --role initiator --peer h:1|--role, --peer and --listen are the two-host mode",
            "--etcd-endpoints ftp://x:1|--etcd-endpoints: 'ftp://x:1' is not an etcd URL",
            "--etcd-endpoints h:2379 --workers 3|--workers must be even",
            "--etcd-endpoints h:2379 --workers 1 --scheme onetomany|--workers must be at least 2",
            "--etcd-endpoints h:2379 --scheme tp|--scheme: unknown scheme 'tp'",
            "--etcd-endpoints h:2379 --benchmark-group a/b|--benchmark-group must be 1..128 letters",
            "--etcd-endpoints h:2379 --barrier-timeout 0|--barrier-timeout must be at least 1 second"})
    void badFleetFlagsExitTwoWithOneLine(String lineAndMessage) {
        String[] parts = lineAndMessage.split("\\|");
        List<String> args = new ArrayList<>(List.of("bench"));
        args.addAll(List.of(parts[0].split(" ")));
        Cli.Result r = Cli.run(args.toArray(String[]::new));
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).contains(parts[1]);
    }

    @Test
    void anUnreachableEtcdFailsInOneLineNamingIt() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Cli.Result r = Cli.run("bench", "--etcd-endpoints", "127.0.0.1:" + port);
        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).contains("cannot reach etcd: http://127.0.0.1:" + port);
    }

    /** On hosts of two GPUs ({@link HostGpusDouble}): each worker's buffers go on the GPUs of its role. */
    @Test
    void fleetWorkersSpreadTheirRolesBuffersOverTheirGpus() throws Exception {
        List<CompletableFuture<Cli.Result>> runs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CompletableFuture<Cli.Result> f = new CompletableFuture<>();
            String[] args = MultiGpuBenchTest.bench("--etcd-endpoints", etcd.url().toString(), "--benchmark-group", "gpus",
                    "--workers", "3", "--scheme", "manytoone", "--mem", "vram", "--mode", "mg", "--device-list", "1,0",
                    "--num-initiator-dev", "1", "--num-target-dev", "2", "--batch-sizes", "1,2");
            new Thread(() -> f.complete(Cli.run(new HostGpusDouble(2), args)), "worker").start();
            runs.add(f);
        }
        for (CompletableFuture<Cli.Result> f : runs) {
            JsonNode doc = MultiGpuBenchTest.json(f.get(200, TimeUnit.SECONDS));
            // the target holds a slot per initiator: 2 of them
            MultiGpuBenchTest.everyByteOnEveryGpu(doc, 2);
            assertThat(MultiGpuBenchTest.ints(doc.get("settings").get("targetDevices"))).containsExactly(1, 0);
        }
    }
}
