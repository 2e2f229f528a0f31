package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Progress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class CliParsingTest {

    /** Parses a bench command line without running it and returns the validated settings. */
    private static BenchSettings bench(String... args) {
        return benchCommand(args).settings();
    }

    /** {@code tcpx4j bench ARGS} parsed, not run. */
    private static BenchCommand benchCommand(String... args) {
        CommandLine cl = Main.commandLine(Cli.io(new ByteArrayOutputStream(), new ByteArrayOutputStream(), Map.of()));
        String[] full = new String[args.length + 1];
        full[0] = "bench";
        System.arraycopy(args, 0, full, 1, args.length);
        CommandLine.ParseResult r = cl.parseArgs(full);
        return r.subcommand().commandSpec().commandLine().getCommand();
    }

    @Test
    void benchDefaultsAreEmbeddedLoopbackDramWrite() {
        BenchSettings s = bench();
        assertThat(s.mode()).isEqualTo(BenchSettings.Mode.EMBEDDED);
        assertThat(s.transport()).isEqualTo(TransportKind.LOOPBACK);
        assertThat(s.initiatorMemory()).isEqualTo(MemoryKind.DRAM);
        assertThat(s.targetMemory()).isEqualTo(MemoryKind.DRAM);
        assertThat(s.threads()).isEqualTo(1);
        assertThat(s.depth()).isEqualTo(1);
        assertThat(s.warmupBounded()).isTrue();
        assertThat(s.op()).isEqualTo(BenchSettings.Op.WRITE);
        assertThat(s.blockSizes()).containsExactly(4096L, 16384L, 65536L, 262144L, 1L << 20, 4L << 20, 16L << 20, 64L << 20);
        assertThat(s.batchSizes()).containsExactly(1);
        assertThat(s.iterations()).isZero();
        assertThat(s.warmup()).isEqualTo(-1);
        assertThat(s.warmupSeconds()).isEqualTo(1.0);
        assertThat(s.checkConsistency()).isFalse();
        assertThat(s.channels()).isEqualTo(2);
        assertThat(s.chunkSize()).isEqualTo(512 * 1024);
        assertThat(s.bindHost()).isNull();
        assertThat(s.bufferBytes()).isEqualTo(64L << 20);
    }

    @Test
    void defaultIterationsScaleWithSizeWithinBounds() {
        BenchSettings s = bench();
        assertThat(s.iterationsFor(4096, 1)).isEqualTo(BenchSettings.MAX_ITERATIONS);
        assertThat(s.iterationsFor(1 << 20, 1)).isEqualTo(512);
        assertThat(s.iterationsFor(64L << 20, 1)).isEqualTo(BenchSettings.MIN_ITERATIONS);
        assertThat(s.iterationsFor(16L << 20, 1)).isEqualTo(32);
        assertThat(s.iterationsFor(1 << 20, 4)).isEqualTo(128);
        assertThat(s.warmupFor(4096, 1)).isEqualTo(100);
        assertThat(s.warmupFor(64L << 20, 1)).isEqualTo(2);
    }

    @Test
    void everyBenchFlagLandsInTheSettings() {
        BenchSettings s = bench("--op", "READ", "--mem", "dram", "--transport", "loopback", "--block-sizes", "4K,1m,2G",
                "--batch-sizes", "1,8", "--iterations", "7", "--warmup", "0", "--check-consistency", "--channels", "4",
                "--chunk-size", "1M", "--bind", "127.0.0.2", "--json", "-v");
        assertThat(s.op()).isEqualTo(BenchSettings.Op.READ);
        assertThat(s.blockSizes()).containsExactly(4096L, 1L << 20, 2L << 30);
        assertThat(s.batchSizes()).containsExactly(1, 8);
        assertThat(s.iterations()).isEqualTo(7);
        assertThat(s.iterationsFor(4096, 1)).isEqualTo(7);
        assertThat(s.warmup()).isZero();
        assertThat(s.warmupFor(4096, 1)).isZero();
        assertThat(s.checkConsistency()).isTrue();
        assertThat(s.channels()).isEqualTo(4);
        assertThat(s.chunkSize()).isEqualTo(1 << 20);
        assertThat(s.bindHost()).isEqualTo("127.0.0.2");
        assertThat(s.bufferBytes()).isEqualTo(16L << 30);
    }

    @Test
    void threadsDepthAndSegmentTypesTakeOursAndNixlbenchsSpelling() {
        BenchSettings ours = bench("--num-threads", "3", "--pipeline-depth", "4", "--initiator-seg-type", "VRAM",
                "--target-seg-type", "dram", "--block-sizes", "1M", "--batch-sizes", "2");
        BenchSettings theirs = bench("--num_threads", "3", "--pipeline_depth", "4", "--initiator_seg_type", "VRAM",
                "--target_seg_type", "DRAM", "--block-sizes", "1M", "--batch-sizes", "2");
        for (BenchSettings s : List.of(ours, theirs)) {
            assertThat(s.threads()).isEqualTo(3);
            assertThat(s.depth()).isEqualTo(4);
            assertThat(s.initiatorMemory()).isEqualTo(MemoryKind.VRAM);
            assertThat(s.targetMemory()).isEqualTo(MemoryKind.DRAM);
            // every thread's every in-flight transfer has a slice of its own
            assertThat(s.bufferBytes()).isEqualTo(12L * 2 * (1 << 20));
        }
        // --mem is the default of both sides
        BenchSettings vram = bench("--mem", "vram", "--target-seg-type", "dram");
        assertThat(vram.initiatorMemory()).isEqualTo(MemoryKind.VRAM);
        assertThat(vram.targetMemory()).isEqualTo(MemoryKind.DRAM);
    }

    @Test
    void iterationsAreSharedByTheThreadsAndEachGetsAtLeastOne() {
        BenchSettings s = bench("--num-threads", "3", "--iterations", "10");
        assertThat(s.iterationsFor(4096, 1)).isEqualTo(10);
        assertThat(List.of(s.shareOf(10, 0), s.shareOf(10, 1), s.shareOf(10, 2))).containsExactly(4, 3, 3);
        assertThat(bench("--num-threads", "4", "--iterations", "2").iterationsFor(4096, 1)).isEqualTo(4);
        // one per transfer slot at least
        assertThat(bench("--num-threads", "2", "--pipeline-depth", "3", "--iterations", "2").iterationsFor(4096, 1))
                .isEqualTo(6);
        assertThat(bench("--warmup-seconds", "2").warmupBounded()).as("an explicit warm-up is kept").isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"--num-threads=0", "--num-threads=65", "--pipeline-depth=0", "--pipeline_depth=257",
        "--initiator-seg-type=HBM", "--format=xml", "--report-interval=0"})
    void badFleetFlagsAreOneLineAndExitTwo(String flag) {
        Cli.Result r = Cli.run("bench", flag, "--block-sizes", "4K", "--iterations", "1", "--warmup-seconds", "0");
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).contains(flag.substring(0, flag.indexOf('=')).replace('_', '-').substring(0, 8));
        assertThat(r.out()).isEmpty();
    }

    @Test
    void twoOutputFormatsAtOnceAreRefused() {
        Cli.Result r = Cli.run("bench", "--json", "--format", "nixlbench", "--block-sizes", "4K", "--iterations", "1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.errLines()).containsExactly("tcpx4j: --format, --json and --csv each choose what stdout shows:"
                + " give one of them (see 'tcpx4j bench --help')");
    }

    @Test
    void aRunTooLargeForTheSlotsIsRefused() {
        Cli.Result r = Cli.run("bench", "--block-sizes", "1G", "--batch-sizes", "16", "--num-threads", "4",
                "--pipeline-depth", "2");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("x --num-threads x --pipeline-depth must be at most 64G");
    }

    @Test
    void spinSetsHowLongTheEnginesDriversSpinBeforeTheyBlock() {
        assertThat(engineOptions().engineConfig("e", "127.0.0.1").progress()).isEqualTo(Progress.defaults());
        assertThat(engineOptions("--spin", "0").engineConfig("e", "127.0.0.1").progress().spin()).isZero();
        assertThat(engineOptions("--spin", "20us").engineConfig("e", "127.0.0.1").progress().spin())
                .isEqualTo(Duration.ofNanos(20_000));
        assertThat(engineOptions("--spin", "1ms").engineConfig("e", "127.0.0.1", Progress.Driver.CALLER).progress())
                .isEqualTo(new Progress(Progress.Driver.CALLER, Duration.ofMillis(1)));
    }

    @Test
    void inlineLimitAndProgressReachTheEngineAndTheRunner() {
        assertThat(engineOptions().engineConfig("e", "127.0.0.1").inlineLimit()).isEqualTo(32 * 1024);
        assertThat(engineOptions("--inline-limit", "0").engineConfig("e", "127.0.0.1").inlineLimit()).isZero();
        assertThat(engineOptions("--inline-limit", "1M").engineConfig("e", "127.0.0.1").inlineLimit()).isEqualTo(1 << 20);
        assertThat(bench("--progress", "thread").callerProgress()).isFalse();
        assertThat(bench("--progress", "CALLER").callerProgress()).isTrue();
        assertThat(bench().callerProgress()).as("default: the engine's own thread").isFalse();
    }

    @Test
    void coalesceLimitAndLayoutReachTheEngineAndTheRunner() {
        assertThat(engineOptions().engineConfig("e", "127.0.0.1").coalesceLimit()).isEqualTo(32 * 1024);
        assertThat(engineOptions("--coalesce-limit", "0").engineConfig("e", "127.0.0.1").coalesceLimit()).isZero();
        assertThat(engineOptions("--coalesce-limit", "4M").engineConfig("e", "127.0.0.1").coalesceLimit())
                .isEqualTo(4 << 20);
        assertThat(engineOptions("--coalesce-limit", "5M").problem()).contains("--coalesce-limit must be 0..4M");
        assertThat(engineOptions().engineConfig("e", "127.0.0.1").deviceCoalesceLimit()).isEqualTo(128 * 1024);
        assertThat(engineOptions("--device-coalesce-limit", "0").engineConfig("e", "127.0.0.1").deviceCoalesceLimit())
                .isZero();
        assertThat(engineOptions("--device-coalesce-limit", "5M").problem())
                .contains("--device-coalesce-limit must be 0..4M");
        assertThat(bench().reversed()).isFalse();
        assertThat(bench("--layout", "REVERSED").reversed()).isTrue();
    }

    @Test
    void ioThreadsReachTheLoopbackTransport() {
        assertThat(engineOptions().spec("127.0.0.1").ioThreads()).as("default: the transport's own").isEqualTo(2);
        assertThat(engineOptions("--io-threads", "0").spec("127.0.0.1").ioThreads()).isZero();
        assertThat(engineOptions("--io-threads", "16").problem()).isNull();
        assertThat(engineOptions("--io-threads", "17").problem()).contains("--io-threads must be 0..16");
        assertThat(engineOptions("--io-threads", "1", "--transport", "tcpx").problem())
                .contains("applies to --transport loopback only");
    }

    private static EngineOptions engineOptions(String... args) {
        return benchCommand(args).engine;
    }

    @Test
    void rolesTakeTheirAddresses() {
        assertThat(bench("--role", "target", "--listen", "127.0.0.1:0").mode()).isEqualTo(BenchSettings.Mode.TARGET);
        assertThat(bench("--role", "initiator", "--peer", "127.0.0.1:7117").mode()).isEqualTo(BenchSettings.Mode.INITIATOR);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "bench --nope",
        "bench --block-sizes 4K,abc",
        "bench --block-sizes 0",
        "bench --block-sizes 4.5M",
        "bench --batch-sizes 0",
        "bench --batch-sizes x",
        "bench --iterations 0",
        "bench --iterations many",
        "bench --warmup -1",
        "bench --warmup-seconds -1",
        "bench --warmup-seconds 601",
        "bench --warmup-seconds NaN",
        "bench --op copy",
        "bench --mem hbm",
        "bench --transport rdma",
        "bench --channels 0",
        "bench --channels 65",
        "bench --agents 0",
        "serve --agents 65",
        "bench --io-threads -1",
        "serve --io-threads 17",
        "bench --io-threads 0 --transport tcpx",
        "bench --chunk-size 8M",
        "bench --chunk-size 0",
        "bench --chunk-size 4095 --block-sizes 4K --iterations 1 --warmup-seconds 0 --no-baseline",
        "bench --warmup 10001 --block-sizes 4K --iterations 1 --warmup-seconds 0 --no-baseline",
        "bench --idle sometimes",
        "bench --inline-limit 2M",
        "bench --inline-limit -1",
        "bench --progress sometimes",
        "bench --spin 2s",
        "bench --warm-up -1 --block-sizes 4K --iterations 1 --warmup-seconds 0 --no-baseline",
        "serve --warm-up 1000001",
        "bench --warm-up many",
        "bench --spin -1us",
        "bench --spin fast",
        "bench --layout sideways",
        "bench --coalesce-limit 5M",
        "bench --coalesce-limit -1",
        "bench --device-coalesce-limit 5M",
        "bench --device-coalesce-limit -1",
        "bench --peer 127.0.0.1:1",
        "bench --listen 127.0.0.1:1",
        "bench --role initiator",
        "bench --role target --peer 127.0.0.1:1",
        "bench --role initiator --peer 127.0.0.1:1 --listen 127.0.0.1:2",
        "bench --role boss",
        "bench --role initiator --peer nohost",
        "bench --block-sizes 64G --batch-sizes 2",
        "bench extra",
        "serve --listen 127.0.0.1",
        "serve --channels 0",
        "doctor --transport x",
        "frobnicate",
        "",
    })
    void badFlagsExitTwoWithOneLine(String line) {
        Cli.Result r = Cli.run(line.isEmpty() ? new String[0] : line.split(" "));
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.errLines()).as(r.err()).hasSize(1);
        assertThat(r.err()).startsWith("tcpx4j: ");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void unavailableCapabilitiesExitTwoWithOneLine() {
        for (String[] args : List.of(new String[] {"bench", "--transport", "tcpx"}, new String[] {"bench", "--mem", "vram"},
                new String[] {"serve", "--transport", "tcpx"}, new String[] {"serve", "--mem", "vram"})) {
            Cli.Result r = Cli.run(args);
            assertThat(r.exit()).as(r.err()).isEqualTo(2);
            assertThat(r.errLines()).as(r.err()).hasSize(1);
            assertThat(r.err()).contains("not available");
        }
    }

    @Test
    void helpAndVersionExitZero() {
        Cli.Result help = Cli.run("bench", "--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("--block-sizes", "--check-consistency", "--role", "--peer", "--listen", "--json",
                "--csv", "--format", "--num-threads", "--num_threads", "--pipeline-depth", "--initiator-seg-type",
                "--target-seg-type", "--report-interval");
        Cli.Result version = Cli.run("--version");
        assertThat(version.exit()).isZero();
        assertThat(version.out()).startsWith("tcpx4j ");
    }

    @Test
    void aBlockSizeBeyondTheHostsMemoryFailsInOneLineBeforeAllocating(@org.junit.jupiter.api.io.TempDir java.nio.file.Path proc)
            throws Exception {
        java.nio.file.Files.writeString(proc.resolve("meminfo"), "MemTotal: 16777216 kB\nMemAvailable: 8388608 kB\n");
        Cli.Result r = Cli.run("bench", "--block-sizes", "64G", "--procfs", proc.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.errLines()).containsExactly("tcpx4j: --block-sizes 64G x --batch-sizes 1 (both engines in this process)"
                + " needs 128.0 GiB of host memory; this host has 8.0 GiB available (see 'tcpx4j bench --help')");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void serveAndBenchHelpListExitCodesAndTheDeadlineFlags() {
        Cli.Result serve = Cli.run("serve", "--help");
        assertThat(serve.exit()).isZero();
        assertThat(serve.out().replaceAll("\\s+", " ")).contains("Exit codes: 0 stopped by SIGINT/SIGTERM, 1 cannot listen")
                .contains("--oob-timeout").contains("--hello-timeout");
        Cli.Result bench = Cli.run("bench", "--help");
        assertThat(bench.out().replaceAll("\\s+", " ")).contains("130 (SIGINT) or 143 (SIGTERM)").contains("--oob-timeout");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1s", "soon", "10h"})
    void aBadTimeoutIsOneLineAndExitTwo(String value) {
        Cli.Result r = Cli.run("serve", "--oob-timeout", value);
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).contains("--oob-timeout");
    }

    @Test
    void noCommandListsEveryCommandNixlIncluded() {
        Cli.Result r = Cli.run();
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.errLines()).containsExactly(
                "tcpx4j: missing command: bench, doctor, serve or nixl (see 'tcpx4j --help')");
    }

    @Test
    void aSubcommandsBadFlagPointsAtItsOwnHelpWithItsFullName() {
        Cli.Result r = Cli.run("nixl", "install", "--nixl-prefix");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).endsWith("(see 'tcpx4j nixl install --help')" + System.lineSeparator());
        Cli.Result bench = Cli.run("bench", "--nope");
        assertThat(bench.err()).contains("(see 'tcpx4j bench --help')");
    }

    @Test
    void chunkSizeAndWarmupAreBoundedInOneLine() {
        // a run as short as can be: without the bound it would run (and pass) instead of failing slowly
        Cli.Result r = Cli.run("bench", "--chunk-size", "100", "--block-sizes", "4K", "--iterations", "1",
                "--warmup-seconds", "0", "--no-baseline");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.errLines()).containsExactly("tcpx4j: --chunk-size must be 4K..4M (at least one 4-KiB page; TCPX"
                + " holds at most 2048 4-KiB pages per receive), was 100 (see 'tcpx4j bench --help')");
        assertThat(bench("--chunk-size", "4K").chunkSize()).isEqualTo(4096);
        Cli.Result w = Cli.run("bench", "--warmup", "10001", "--block-sizes", "4K", "--iterations", "1",
                "--warmup-seconds", "0", "--no-baseline");
        assertThat(w.errLines()).containsExactly("tcpx4j: --warmup must be 0..10000, was 10001 (see 'tcpx4j bench --help')");
        assertThat(bench("--warmup", "10000").warmup()).isEqualTo(10000);
    }
}
