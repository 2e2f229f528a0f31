package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code scripts/busy-host.sh} for real: it needs root and a writable cgroup hierarchy, and is skipped
 * where the script says it cannot make a cgroup here.
 */
@Timeout(120)
class BenchBusyHostScriptTest {

    private static final Path SCRIPT = Path.of("..", "scripts", "busy-host.sh").toAbsolutePath().normalize();

    private static void assumeRootOnLinux() throws IOException {
        assumeTrue(Files.isRegularFile(SCRIPT), "no " + SCRIPT);
        assumeTrue(Files.isDirectory(Path.of("/sys/fs/cgroup")), "no /sys/fs/cgroup");
        boolean root = Files.readAllLines(Path.of("/proc/self/status")).stream()
                .anyMatch(l -> l.startsWith("Uid:") && l.split("\\s+")[1].equals("0"));
        assumeTrue(root, "not root");
    }

    private static Process script(Path dir, String... args) throws IOException {
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", SCRIPT.toString()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).directory(dir.toFile())
                .redirectOutput(dir.resolve("out").toFile()).redirectError(dir.resolve("err").toFile()).start();
    }

    private static String err(Path dir) throws IOException {
        return Files.readString(dir.resolve("err"), StandardCharsets.UTF_8);
    }

    /** Skips when the script could not make a cgroup on this host (read-only, no cpu controller). */
    private static void assumeCgroupMade(int exit, Path dir) throws IOException {
        String err = err(dir);
        assumeFalse(exit == 2 && err.startsWith("busy-host: cannot"), err);
    }

    /** The cgroup the script with this pid makes, wherever it lies; null while there is none. */
    private static Path cgroupOf(long pid) {
        for (String base : new String[] {"/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
            Path c = Path.of(base, "busy-host." + pid);
            if (Files.isRegularFile(c.resolve("cgroup.procs"))) {
                return c;
            }
        }
        return null;
    }

    /** After a failed test: the script, whatever is left in its cgroup, and the cgroup. */
    private static void removeLeftovers(Process p) throws Exception {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
        Path c = cgroupOf(p.pid());
        if (c == null) {
            return;
        }
        for (int i = 0; i < 50 && !Files.readAllLines(c.resolve("cgroup.procs")).isEmpty(); i++) {
            for (String pid : Files.readAllLines(c.resolve("cgroup.procs"))) {
                ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
            }
            Thread.sleep(100);
        }
        Files.deleteIfExists(c);
    }

    private static Map<String, String> stats(Path file) throws IOException {
        Map<String, String> m = new HashMap<>();
        for (String l : Files.readAllLines(file)) {
            int eq = l.indexOf('=');
            m.put(l.substring(0, eq), l.substring(eq + 1));
        }
        return m;
    }

    @Test
    void runsTheCommandInAQuotaBesideCoTenantsAndRemovesTheCgroup(@TempDir Path dir) throws Exception {
        assumeRootOnLinux();
        Path stats = dir.resolve("stats");
        Process p = script(dir, "--quota-cpus", "0.5", "--busy", "2", "--stats", stats.toString(), "--",
                "sh", "-c", "cat /proc/self/cgroup; sleep 1; exit 3");
        try {
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            if (p.isAlive()) {
                removeLeftovers(p);
            }
        }
        assumeCgroupMade(p.exitValue(), dir);
        assertThat(p.exitValue()).as(err(dir)).isEqualTo(3);
        Map<String, String> s = stats(stats);
        String cgroup = s.get("cgroup");
        assertThat(s).containsEntry("quota_us", "50000").containsEntry("period_us", "100000")
                .containsEntry("busy", "2").containsEntry("exit", "3");
        // the command ran in the cgroup made for it (v1: the cpu controller's line, v2: the only line)
        String relative = cgroup.substring(cgroup.lastIndexOf('/'));
        assertThat(Files.readString(dir.resolve("out"))).contains(relative + "\n");
        assertThat(Long.parseLong(s.get("nr_periods"))).isPositive();
        assertThat(Long.parseLong(s.get("nr_throttled"))).isBetween(0L, Long.parseLong(s.get("nr_periods")));
        assertThat(err(dir)).containsPattern("busy-host: cgroup v[12], quota 0.5 CPUs \\(50000/100000 us\\), 2 busy"
                + " co-tenants: [0-9]+ periods, throttled in [0-9]+ \\([0-9.]+%\\)");
        // a cgroup is removed only when no process is left in it
        assertThat(Path.of(cgroup)).doesNotExist();
    }

    @Test
    void sigtermEndsTheCommandAndTheCoTenantsAndRemovesTheCgroup(@TempDir Path dir) throws Exception {
        assumeRootOnLinux();
        Path stats = dir.resolve("stats");
        Process p = script(dir, "--quota-cpus", "1", "--busy", "2", "--stats", stats.toString(), "--", "sleep", "60");
        Path cgroup = null;
        List<String> members;
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // the cgroup is named after the script's pid; it holds 3 processes once everything has started
            while (p.isAlive() && System.nanoTime() - deadline < 0) {
                cgroup = cgroupOf(p.pid());
                if (cgroup != null && Files.readAllLines(cgroup.resolve("cgroup.procs")).size() == 3) {
                    break;
                }
                Thread.sleep(20);
            }
            if (!p.isAlive()) {
                assumeCgroupMade(p.exitValue(), dir);
            }
            assertThat(cgroup).as(err(dir)).isNotNull();
            members = Files.readAllLines(cgroup.resolve("cgroup.procs"));
            assertThat(members).hasSize(3);
            p.destroy();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            if (p.isAlive()) {
                removeLeftovers(p);
            }
        }
        assertThat(p.exitValue()).as(err(dir)).isEqualTo(143);
        assertThat(cgroup).doesNotExist();
        for (String pid : members) {
            assertThat(Path.of("/proc", pid)).as("process " + pid).satisfiesAnyOf(
                    d -> assertThat(d).doesNotExist(),
                    d -> assertThat(BenchBusyTest.running(Long.parseLong(pid))).isFalse());
        }
        assertThat(stats(stats)).containsEntry("exit", "143");
    }
}
