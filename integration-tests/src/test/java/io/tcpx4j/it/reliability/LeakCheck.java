package io.tcpx4j.it.reliability;

import java.io.File;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Process-level leak checks: threads, file descriptors (/proc/self/fd), native test buffers. Take a
 * {@link #snapshot()} before, then {@link #assertBackTo} after: it polls a few seconds, since threads
 * and sockets end asynchronously.
 */
final class LeakCheck {

    private LeakCheck() {
    }

    record Snapshot(Map<String, Integer> threads, int fds, long buffers) {
        int threadCount() {
            return threads.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /** Threads by name with digits folded ("tcpx4j-loopback-io-#"), minus the JDK's own helpers. */
    static Map<String, Integer> threads() {
        Map<String, Integer> byName = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (!t.isAlive() || ignored(t.getName())) {
                continue;
            }
            byName.merge(t.getName().replaceAll("\\d+", "#"), 1, Integer::sum);
        }
        return byName;
    }

    private static boolean ignored(String name) {
        // process reapers linger after a child exits; JIT/GC/attach threads come and go on their own
        return name.startsWith("process reaper") || name.startsWith("ForkJoinPool")
                || name.startsWith("Attach Listener") || name.startsWith("C1 ") || name.startsWith("C2 ")
                || name.startsWith("surefire") || name.startsWith("Common-Cleaner");
    }

    private static List<String> extraThreads(Snapshot base) {
        List<String> extra = new ArrayList<>();
        for (var e : threads().entrySet()) {
            int was = base.threads().getOrDefault(e.getKey(), 0);
            if (e.getValue() > was) {
                extra.add(e.getKey() + " x" + e.getValue() + " (baseline " + was + ")");
            }
        }
        return extra;
    }

    static int tcpx4jThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith("tcpx4j")) {
                n++;
            }
        }
        return n;
    }

    static int fds() {
        String[] list = new File("/proc/self/fd").list();
        return list == null ? -1 : list.length;
    }

    /** Resident set size of this process in bytes (VmRSS), or -1 off Linux. */
    static long rss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("\\D+", "")) * 1024;
                }
            }
        } catch (Exception e) {
            return -1;
        }
        return -1;
    }

    static long heapUsed() {
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    static long directBytes() {
        long n = 0;
        for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            n += b.getMemoryUsed();
        }
        return n;
    }

    private static boolean warm;

    /**
     * A baseline. The first one in a JVM warms up first (two engines, a transfer, closed again): the
     * JVM opens jar files and helper descriptors lazily and keeps them, which is no leak of ours.
     */
    static synchronized Snapshot snapshot() {
        if (!warm) {
            warm = true;
            warmUp();
        }
        return new Snapshot(threads(), fds(), Buffers.live());
    }

    private static void warmUp() {
        try (Node a = new Node(Node.config("warm-a"));
             Node b = new Node(Node.config("warm-b"))) {
            a.meet(b);
            var src = a.randomRegion(1 << 20, 1);
            var dst = b.randomRegion(1 << 20, 2);
            b.publish(dst, a);
            var s = a.engine.session("warm-b");
            Node.await(s.write(java.util.List.of(src.descriptor()), java.util.List.of(dst.descriptor()), new byte[1]),
                    Duration.ofSeconds(30));
            Node.await(s.read(java.util.List.of(src.descriptor()), java.util.List.of(dst.descriptor()), null),
                    Duration.ofSeconds(30));
        }
    }

    /**
     * No thread name (digits folded) with more live threads than in {@code base}, and descriptors back
     * to at most {@code fdSlack} above it, within 10 s.
     */
    static void assertBackTo(Snapshot base, int fdSlack) {
        boolean ok = Node.eventually(Duration.ofSeconds(10),
                () -> extraThreads(base).isEmpty() && fds() <= base.fds() + fdSlack);
        if (!ok) {
            assertThat(extraThreads(base)).as("threads beyond the baseline").isEmpty();
            assertThat(fds()).as("open file descriptors (baseline %d)", base.fds()).isLessThanOrEqualTo(base.fds() + fdSlack);
        }
    }
}
