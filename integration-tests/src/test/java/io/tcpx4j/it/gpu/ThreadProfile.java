package io.tcpx4j.it.gpu;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A poor man's profiler for the pair benchmark (the device image has no perf, and the jlink'ed
 * runtime no jcmd): CPU time of every tcpx4j thread over an interval, as a share of the wall time,
 * and where those threads were, sampled every 2 ms ({@code Thread.getStackTrace}: the top frame and
 * the first tcpx4j frame under it). Threads of one kind (I/O loops) are reported together.
 */
final class ThreadProfile {

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private final Map<Thread, Long> cpuAtStart = new HashMap<>();
    private final Map<String, Map<String, Integer>> frames = new TreeMap<>();
    private final Map<String, Integer> samples = new HashMap<>();
    private long wallStart;
    private volatile boolean sampling;
    private Thread sampler;

    /** Starts measuring the threads alive now whose names start with {@code tcpx4j-}. */
    void start() {
        cpuAtStart.clear();
        frames.clear();
        samples.clear();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("tcpx4j-")) {
                cpuAtStart.put(t, MX.getThreadCpuTime(t.getId()));
            }
        }
        wallStart = System.nanoTime();
        sampling = true;
        sampler = new Thread(this::sample, "profile-sampler");
        sampler.setDaemon(true);
        sampler.start();
    }

    /** Stops and returns one line per thread group: CPU share and the most frequent frames. */
    String stop() throws InterruptedException {
        long wall = System.nanoTime() - wallStart;
        sampling = false;
        sampler.join();
        Map<String, List<Double>> cpu = new TreeMap<>();
        for (Map.Entry<Thread, Long> e : cpuAtStart.entrySet()) {
            long now = MX.getThreadCpuTime(e.getKey().getId());
            if (now >= 0 && e.getValue() >= 0) {
                cpu.computeIfAbsent(group(e.getKey()), k -> new ArrayList<>()).add(100.0 * (now - e.getValue()) / wall);
            }
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, List<Double>> e : cpu.entrySet()) {
            List<Double> v = e.getValue();
            double sum = v.stream().mapToDouble(Double::doubleValue).sum();
            double max = v.stream().mapToDouble(Double::doubleValue).max().orElse(0);
            out.append(String.format(Locale.ROOT, "%s x%d: CPU %.0f%% of one core each (max %.0f%%, sum %.0f%%); ",
                    e.getKey(), v.size(), sum / v.size(), max, sum));
            Map<String, Integer> f = frames.getOrDefault(e.getKey(), Map.of());
            int n = samples.getOrDefault(e.getKey(), 0);
            f.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(6)
                    .forEach(x -> out.append(String.format(Locale.ROOT, "%s %.0f%%, ", x.getKey(), 100.0 * x.getValue() / n)));
            out.append(" | ");
        }
        return out.toString();
    }

    private void sample() {
        List<Thread> threads = new ArrayList<>(cpuAtStart.keySet());
        while (sampling) {
            for (Thread t : threads) {
                StackTraceElement[] st = t.getStackTrace();
                if (st.length == 0) {
                    continue;
                }
                String g = group(t);
                samples.merge(g, 1, Integer::sum);
                frames.computeIfAbsent(g, k -> new LinkedHashMap<>()).merge(describe(st), 1, Integer::sum);
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** "top frame < first tcpx4j frame" (the same frame once when the top is ours). */
    private static String describe(StackTraceElement[] st) {
        String top = shortName(st[0]);
        for (StackTraceElement e : st) {
            if (e.getClassName().startsWith("io.tcpx4j.")) {
                String own = shortName(e);
                return own.equals(top) ? top : top + " < " + own;
            }
        }
        return top;
    }

    private static String shortName(StackTraceElement e) {
        String c = e.getClassName();
        return c.substring(c.lastIndexOf('.') + 1) + "." + e.getMethodName();
    }

    private static String group(Thread t) {
        return t.getName().replaceAll("-\\d+$", "-*");
    }
}
