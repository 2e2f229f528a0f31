package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code bench --busy N}: the loops start, are reported, and none outlives the command however it ends. */
@Timeout(180)
class BenchBusyTest {

    private static final String[] SHORT = {"bench", "--block-sizes", "4K,64K", "--iterations", "20", "--warmup", "2",
            "--warmup-seconds", "0", "--chunk-size", "64K"};

    private final List<List<Long>> started = new CopyOnWriteArrayList<>();

    @AfterEach
    void noSeam() {
        BusyLoops.onStart = null;
    }

    private void recordStarts() {
        BusyLoops.onStart = started::add;
    }

    private static String[] with(String[] base, String... more) {
        String[] all = new String[base.length + more.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    /** Whether the process runs (a zombie, dead but not yet reaped, does not). */
    static boolean running(long pid) {
        Path stat = Path.of("/proc/" + pid + "/stat");
        if (Files.isDirectory(Path.of("/proc/self"))) {
            try {
                String s = Files.readString(stat);
                char state = s.substring(s.lastIndexOf(')') + 2).charAt(0);
                return state != 'Z' && state != 'X';
            } catch (IOException e) {
                return false;
            }
        }
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private static List<Integer> myCpus() {
        return BusyLoops.allowedCpus(Path.of("/proc"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "257", "two", "1.5"})
    void aBadCountIsOneLineAndExit2(String value) {
        recordStarts();
        Cli.Result r = Cli.run("bench", "--busy", value);
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).startsWith("tcpx4j: ").contains("--busy");
        assertThat(r.out()).isEmpty();
        assertThat(started).isEmpty();
    }

    @Test
    void theHeaderNamesTheLoopsAndTheirCpusAndTheyAreGoneWhenTheCommandReturns() {
        recordStarts();
        Cli.Result r = Cli.run(with(SHORT, "--busy", "2"));
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(started).hasSize(1);
        assertThat(started.get(0)).hasSize(2).doesNotHaveDuplicates();
        String header = r.out().split("\n")[0];
        List<Integer> cpus = myCpus();
        if (cpus != null) {
            assertThat(header).endsWith(", 2 busy loops on CPU" + (cpus.size() == 1 ? " " : "s ")
                    + BusyLoops.formatCpus(cpus));
        } else {
            assertThat(header).endsWith(", 2 busy loops");
        }
        assertThat(r.out().split("\n")).hasSize(2 + 1 + 2 + 1);
        assertThat(started.get(0)).noneMatch(BenchBusyTest::running);
    }

    @Test
    void theCpusComeFromCpusAllowedList(@TempDir Path procfs) throws IOException {
        Files.createDirectories(procfs.resolve("self"));
        Files.writeString(procfs.resolve("self/status"), "Name:\tjava\nCpus_allowed:\t10f\nCpus_allowed_list:\t0-3,8\n");
        Cli.Result r = Cli.run(with(SHORT, "--busy", "1", "--procfs", procfs.toString(), "--no-baseline"));
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out().split("\n")[0]).endsWith(", 1 busy loop on CPUs 0-3,8");
    }

    @Test
    void noBusyLoopsLeaveTheHeaderAsItWasAndStartNothing() {
        recordStarts();
        Cli.Result r = Cli.run(with(SHORT, "--no-baseline"));
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out().split("\n")[0]).doesNotContain("busy");
        assertThat(started).isEmpty();
    }

    @Test
    void jsonHasTheCountAndTheCpusAsNumbersAndEachRowsLongestTransfer() throws Exception {
        recordStarts();
        Cli.Result r = Cli.run(with(SHORT, "--busy", "3", "--json"));
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode s = new ObjectMapper().readTree(r.out()).get("settings");
        assertThat(s.get("busy").isInt()).isTrue();
        assertThat(s.get("busy").asInt()).isEqualTo(3);
        List<Integer> cpus = myCpus();
        if (cpus != null) {
            List<Integer> reported = new ArrayList<>();
            s.get("cpus").forEach(c -> {
                assertThat(c.isInt()).as("cpu %s", c).isTrue();
                reported.add(c.asInt());
            });
            assertThat(reported).isEqualTo(cpus);
        }
        for (JsonNode row : new ObjectMapper().readTree(r.out()).get("rows")) {
            assertThat(row.get("maxLatencyUs").isNumber()).isTrue();
            assertThat(row.get("maxLatencyUs").asDouble()).isGreaterThanOrEqualTo(row.get("p99LatencyUs").asDouble());
        }
        assertThat(started).hasSize(1);
        assertThat(started.get(0)).hasSize(3).noneMatch(BenchBusyTest::running);
    }

    @Test
    void withoutBusyLoopsJsonSaysZero() throws Exception {
        Cli.Result r = Cli.run(with(SHORT, "--json", "--no-baseline"));
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode busy = new ObjectMapper().readTree(r.out()).get("settings").get("busy");
        assertThat(busy.isInt()).isTrue();
        assertThat(busy.asInt()).isZero();
    }

    @Test
    void aFailedRunStopsTheLoops() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        recordStarts();
        Cli.Result r = Cli.run(with(SHORT, "--busy", "2", "--role", "initiator", "--peer", "127.0.0.1:" + port,
                "--peer-wait", "0"));
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
        assertThat(started).hasSize(1);
        assertThat(started.get(0)).hasSize(2).noneMatch(BenchBusyTest::running);
    }

    @Test
    void bothRolesOfATwoProcessRunStartAndStopTheirOwnLoops() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String listen = "127.0.0.1:" + port;
        recordStarts();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.util.concurrent.CompletableFuture<Integer> target = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> Main.run(new String[] {"bench", "--role", "target", "--listen", listen, "--busy", "1"},
                        Cli.io(out, err, java.util.Map.of())));
        // the initiator retries until the target listens
        Cli.Result r = Cli.run(with(SHORT, "--role", "initiator", "--peer", listen, "--busy", "2"));
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(target.get(60, TimeUnit.SECONDS)).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(r.out().split("\n")[0]).contains("(initiator -> " + listen + ")").contains(", 2 busy loops");
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("tcpx4j bench target: 1 busy loop");
        assertThat(started).hasSize(2);
        assertThat(started.stream().map(List::size)).containsExactlyInAnyOrder(1, 2);
        assertThat(started.stream().flatMap(List::stream)).noneMatch(BenchBusyTest::running);
    }

    @Test
    void cpuListsParseAndFormatLikeTheKernels() {
        assertThat(BusyLoops.parseCpus("0-3,8,10-11")).containsExactly(0, 1, 2, 3, 8, 10, 11);
        assertThat(BusyLoops.formatCpus(List.of(0, 1, 2, 3, 8, 10, 11))).isEqualTo("0-3,8,10-11");
        assertThat(BusyLoops.formatCpus(List.of(5))).isEqualTo("5");
        assertThat(BusyLoops.describe(1, List.of(5))).isEqualTo("1 busy loop on CPU 5");
        assertThat(BusyLoops.describe(4, null)).isEqualTo("4 busy loops");
    }

    @Test
    void noCpuListInStatusIsUnknown(@TempDir Path procfs) throws IOException {
        Files.createDirectories(procfs.resolve("self"));
        Files.writeString(procfs.resolve("self/status"), "Name:\tjava\n");
        assertThat(BusyLoops.allowedCpus(procfs)).isNull();
        assertThat(BusyLoops.allowedCpus(procfs.resolve("missing"))).isNull();
    }

    // a real child JVM, ended by a signal

    private static final Pattern PIDS = Pattern.compile("busy loops? .*: pids \\[([0-9, ]+)]");

    private static Process child(String... args) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** The pids the child logs (-v) once its loops run; its stderr is drained on from then on. */
    private static List<Long> loggedPids(Process p) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        String l;
        while ((l = r.readLine()) != null) {
            seen.add(l);
            Matcher m = PIDS.matcher(l);
            if (m.find()) {
                Thread drain = new Thread(() -> {
                    try {
                        while (r.readLine() != null) {
                            // keeps the child from blocking on a full pipe
                        }
                    } catch (IOException e) {
                        // the child is gone
                    }
                });
                drain.setDaemon(true);
                drain.start();
                List<Long> pids = new ArrayList<>();
                for (String s : m.group(1).split(",\\s*")) {
                    pids.add(Long.parseLong(s.trim()));
                }
                return pids;
            }
        }
        throw new AssertionError("the child logged no busy loop pids: " + String.join("\n", seen));
    }

    private static boolean sigtermNotIgnored() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(l.substring(7).trim(), 16) & (1L << 14)) == 0;
            }
        }
        return true;
    }

    @ParameterizedTest
    @ValueSource(strings = {"embedded", "target"})
    void sigtermStopsTheLoops(String mode) throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")) && sigtermNotIgnored(), "needs Linux and SIGTERM");
        Process p = mode.equals("target")
                ? child("bench", "-v", "--role", "target", "--listen", "127.0.0.1:0", "--busy", "2")
                // the second row (128 GiB) would take minutes
                : child("bench", "-v", "--block-sizes", "4K,32M", "--iterations", "4000", "--warmup", "0",
                        "--chunk-size", "64K", "--busy", "2");
        try {
            List<Long> pids = loggedPids(p);
            assertThat(pids).hasSize(2).allMatch(BenchBusyTest::running);
            new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).inheritIO().start().waitFor();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("exited after SIGTERM").isTrue();
            assertThat(p.exitValue()).isEqualTo(143);
            assertThat(pids).noneMatch(BenchBusyTest::running);
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void loopsWhoseJvmWasKilledEndByThemselves() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs Linux");
        Process p = child("bench", "-v", "--block-sizes", "4K,32M", "--iterations", "4000", "--warmup", "0",
                "--chunk-size", "64K", "--busy", "2");
        try {
            List<Long> pids = loggedPids(p);
            assertThat(pids).hasSize(2).allMatch(BenchBusyTest::running);
            p.destroyForcibly();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            // each loop checks its parent every few tens of milliseconds; the deadline only bounds the test
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (pids.stream().anyMatch(BenchBusyTest::running) && System.nanoTime() - deadline < 0) {
                Thread.sleep(50);
            }
            assertThat(pids).noneMatch(BenchBusyTest::running);
        } finally {
            p.destroyForcibly();
        }
    }
}
