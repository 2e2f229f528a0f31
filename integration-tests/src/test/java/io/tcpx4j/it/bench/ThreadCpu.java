package io.tcpx4j.it.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * CPU time and context switches of this process's threads, from Linux's {@code /proc/self/task}: user
 * and system time (so time in socket system calls counts), voluntary switches (blocking, parking) and
 * involuntary ones (preempted). Threads are grouped by the first word of their native name.
 * Elsewhere than Linux it reports nothing.
 *
 * <p><b>Not thread-safe.</b>
 */
final class ThreadCpu {

    private static final Path TASKS = Path.of("/proc/self/task");
    private static final double TICK_MS = 10.0; // USER_HZ is 100 on every Linux build that matters

    /** Per-group totals: {user ms, system ms, voluntary switches, involuntary switches}. */
    private final Map<String, double[]> totals = new TreeMap<>();
    private Map<String, long[]> before;

    static boolean available() {
        return Files.isDirectory(TASKS);
    }

    void start() {
        before = snapshot();
    }

    /** Adds what every thread used since {@link #start()}. */
    void stop() {
        Map<String, long[]> after = snapshot();
        for (Map.Entry<String, long[]> e : after.entrySet()) {
            long[] b = before.getOrDefault(e.getKey(), new long[5]);
            long[] a = e.getValue();
            double[] t = totals.computeIfAbsent(group(e.getKey()), k -> new double[4]);
            for (int i = 0; i < 4; i++) {
                t[i] += a[i] - b[i];
            }
        }
    }

    /** One line per group: CPU ms and switches per round. */
    String report(int rounds) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, double[]> e : totals.entrySet()) {
            double[] t = e.getValue();
            if (t[0] + t[1] == 0 && t[2] + t[3] < rounds) {
                continue;
            }
            sb.append(String.format("      %-16s user %6.1f ms  sys %6.1f ms  switches vol %7.0f  invol %6.0f  (per round)%n",
                    e.getKey(), t[0] * TICK_MS / rounds, t[1] * TICK_MS / rounds, t[2] / rounds, t[3] / rounds));
        }
        return sb.toString();
    }

    private static String group(String key) {
        String name = key.substring(key.indexOf(' ') + 1);
        if (name.startsWith("tcpx4j-agent")) {
            return "engine agent";
        }
        if (name.startsWith("tcpx4j-loopbac")) {
            return "loopback I/O";
        }
        if (name.startsWith("raw-")) {
            return "raw copy";
        }
        if (name.equals("main") || name.equals("java")) {
            return "main (waits)";
        }
        if (name.startsWith("C1 ") || name.startsWith("C2 ")) {
            return "JIT compilers";
        }
        if (name.startsWith("GC ") || name.startsWith("G1 ")) {
            return "GC";
        }
        return "other";
    }

    /** tid+name -> {utime, stime, voluntary, involuntary, 0} in ticks and counts. */
    private static Map<String, long[]> snapshot() {
        Map<String, long[]> out = new HashMap<>();
        try (Stream<Path> tasks = Files.list(TASKS)) {
            tasks.forEach(t -> {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    int close = stat.lastIndexOf(')');
                    String name = stat.substring(stat.indexOf('(') + 1, close);
                    String[] f = stat.substring(close + 2).split(" ");
                    long[] v = new long[5];
                    v[0] = Long.parseLong(f[11]); // utime: field 14 of stat, 12th after the name
                    v[1] = Long.parseLong(f[12]); // stime
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            v[2] = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                            v[3] = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                    out.put(t.getFileName() + " " + name, v);
                } catch (IOException | RuntimeException e) {
                    // the thread ended between list and read
                }
            });
        } catch (IOException e) {
            return out;
        }
        return out;
    }
}
