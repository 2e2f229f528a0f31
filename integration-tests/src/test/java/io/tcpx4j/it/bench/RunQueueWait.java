package io.tcpx4j.it.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * How long chosen threads of this process sat runnable without a CPU, from Linux's
 * {@code /proc/self/task/<tid>/schedstat} (CPU time, then time spent waiting on a run queue, in ns).
 * A sampler thread reads them every {@code periodNanos} and keeps, per thread, its CPU time, its total
 * wait and its stretches of consecutive samples in which it waited for most of the period: a thread
 * that holds up its peers because the scheduler does not run it shows there; one that blocks (parks,
 * selects) does not. Elsewhere than Linux it reports nothing.
 *
 * <p>{@link #start()} and {@link #stop()} from one thread; the sampler is its own.
 */
final class RunQueueWait {

    private static final Path TASKS = Path.of("/proc/self/task");
    /** The share of a sample period a thread must have waited for the sample to extend a stretch. */
    private static final double HELD_OFF = 0.8;

    /** A stretch in which a thread waited for a CPU: its label, start (System.nanoTime()) and length in ns. */
    record Stretch(String label, long startNanos, long nanos) {
    }

    private final String[] labels;
    private final int[] tids;
    private final long periodNanos;
    private final long minStretchNanos;
    private final long[] cpuAtStart;
    private final long[] cpu;
    private final long[] lastWait;
    private final long[] totalWait;
    private final long[] streak;
    private final long[] streakStart;
    private final List<Stretch> stretches = new ArrayList<>();
    private volatile boolean running;
    private Thread sampler;
    /** CPU time the sampler itself used, in ns: what the measurement took from the threads it measures. */
    private volatile long samplerCpuNanos;

    /**
     * @param threads         tid to a label for the report
     * @param minStretchNanos stretches at least this long are kept with their start
     */
    RunQueueWait(Map<Integer, String> threads, long periodNanos, long minStretchNanos) {
        Map<Integer, String> copy = new LinkedHashMap<>(threads);
        int n = copy.size();
        labels = copy.values().toArray(new String[0]);
        tids = copy.keySet().stream().mapToInt(Integer::intValue).toArray();
        this.periodNanos = periodNanos;
        this.minStretchNanos = minStretchNanos;
        cpuAtStart = new long[n];
        cpu = new long[n];
        lastWait = new long[n];
        totalWait = new long[n];
        streak = new long[n];
        streakStart = new long[n];
    }

    static boolean available() {
        return Files.isDirectory(TASKS) && Files.isRegularFile(Path.of("/proc/thread-self/schedstat"));
    }

    /** The ids of this process's threads now. */
    static Set<Integer> tids() {
        Set<Integer> out = new TreeSet<>();
        try (Stream<Path> tasks = Files.list(TASKS)) {
            tasks.forEach(t -> out.add(Integer.parseInt(t.getFileName().toString())));
        } catch (IOException e) {
            return out;
        }
        return out;
    }

    /** The kernel's name of a thread (at most 15 characters), or "?" once it ended. */
    static String comm(int tid) {
        try {
            return Files.readString(TASKS.resolve(tid + "/comm")).strip();
        } catch (IOException e) {
            return "?";
        }
    }

    void start() {
        for (int i = 0; i < tids.length; i++) {
            long[] s = schedstat(tids[i]);
            cpuAtStart[i] = s[0];
            lastWait[i] = s[1];
        }
        running = true;
        sampler = new Thread(this::sample, "bench-runqueue-sampler");
        sampler.setDaemon(true);
        sampler.start();
    }

    /** Stops sampling. */
    void stop() throws InterruptedException {
        running = false;
        sampler.join();
        for (int i = 0; i < tids.length; i++) {
            long[] s = schedstat(tids[i]);
            cpu[i] = s[0] < 0 ? 0 : s[0] - cpuAtStart[i];
            endStreak(i);
        }
    }

    /** One line per thread, most CPU first: CPU time, total wait, longest stretch. */
    List<String> perThread() {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < tids.length; i++) {
            order.add(i);
        }
        order.sort(Comparator.comparingLong((Integer i) -> cpu[i]).reversed());
        List<String> out = new ArrayList<>();
        for (int i : order) {
            long longest = stretches.stream().filter(s -> s.label().equals(labels[i]))
                    .mapToLong(Stretch::nanos).max().orElse(0);
            out.add(String.format("%-26s cpu %8.1f ms  waited for a CPU %7.2f ms  longest stretch %s", labels[i],
                    cpu[i] / 1e6, totalWait[i] / 1e6, longest == 0 ? "-" : String.format("%.2f ms", longest / 1e6)));
        }
        return out;
    }

    /** The stretches of at least minStretchNanos, in order of start. */
    List<Stretch> stretches() {
        List<Stretch> out = new ArrayList<>(stretches);
        out.sort(Comparator.comparingLong(Stretch::startNanos));
        return out;
    }

    private void sample() {
        long ownCpuAtStart = ownCpu();
        // kept open and read again from offset 0 each time: opening a /proc file per read costs more than the read
        FileChannel[] files = new FileChannel[tids.length];
        for (int i = 0; i < tids.length; i++) {
            try {
                files[i] = FileChannel.open(TASKS.resolve(tids[i] + "/schedstat"), StandardOpenOption.READ);
            } catch (IOException e) {
                files[i] = null; // the thread ended
            }
        }
        ByteBuffer buf = ByteBuffer.allocate(128);
        long last = System.nanoTime();
        while (running) {
            LockSupport.parkNanos(periodNanos);
            long now = System.nanoTime();
            long period = now - last;
            last = now;
            for (int i = 0; i < tids.length; i++) {
                long w = waitNanos(files[i], buf);
                if (w < 0) {
                    continue;
                }
                long delta = w - lastWait[i];
                lastWait[i] = w;
                totalWait[i] += delta;
                if (delta >= HELD_OFF * period) {
                    if (streak[i] == 0) {
                        streakStart[i] = now - period;
                    }
                    streak[i] += delta;
                } else if (streak[i] > 0) {
                    streak[i] += delta;
                    endStreak(i);
                }
            }
        }
        samplerCpuNanos = ownCpu() - ownCpuAtStart;
        for (FileChannel f : files) {
            try {
                if (f != null) {
                    f.close();
                }
            } catch (IOException ignored) {
                // a /proc file; nothing to flush
            }
        }
    }

    /** The second field of an open schedstat file (run-queue wait, ns); -1 if unreadable. */
    private static long waitNanos(FileChannel file, ByteBuffer buf) {
        if (file == null) {
            return -1;
        }
        try {
            buf.clear();
            file.read(buf, 0);
            int end = buf.position();
            int i = 0;
            while (i < end && buf.get(i) != ' ') {
                i++;
            }
            long v = 0;
            for (i++; i < end && buf.get(i) >= '0' && buf.get(i) <= '9'; i++) {
                v = v * 10 + (buf.get(i) - '0');
            }
            return v;
        } catch (IOException e) {
            return -1;
        }
    }

    /** CPU time the sampler used while it ran, in ns. */
    long samplerCpuNanos() {
        return samplerCpuNanos;
    }

    private static long ownCpu() {
        try {
            String s = Files.readString(Path.of("/proc/thread-self/schedstat"));
            return Long.parseLong(s.substring(0, s.indexOf(' ')));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private void endStreak(int i) {
        if (streak[i] >= minStretchNanos) {
            stretches.add(new Stretch(labels[i], streakStart[i], streak[i]));
        }
        streak[i] = 0;
    }

    /** {CPU ns, run-queue wait ns} of a thread so far; {-1, -1} once it ended. */
    private static long[] schedstat(int tid) {
        try {
            String s = Files.readString(TASKS.resolve(tid + "/schedstat"));
            int a = s.indexOf(' ');
            int b = s.indexOf(' ', a + 1);
            return new long[] {Long.parseLong(s.substring(0, a)), Long.parseLong(s.substring(a + 1, b))};
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
    }
}
