package io.tcpx4j.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code bench --busy N}: N child processes that each keep one CPU busy for the length of a run, as the
 * Python workers and pollers on a shared GPU host do. Each is {@code /bin/sh} spinning in shell builtins
 * (no process of its own per iteration). A child process inherits the JVM's CPU affinity, so under
 * {@code taskset -c 0,1} the loops compete for the bench's own CPUs.
 *
 * <p>They end on {@link #close()} (normal end and failure), in a shutdown hook (SIGTERM, SIGINT,
 * {@code System.exit}), and by themselves when the JVM is gone without either (SIGKILL): every
 * {@link #CHECK_SPINS} iterations a loop checks that its parent is still the process that started it
 * and exits if not.
 */
final class BusyLoops implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(BusyLoops.class.getName());

    /** Largest {@code --busy}. */
    static final int MAX = 256;
    /** Shell loop iterations between two checks of the parent: the check is a small share of the spinning. */
    static final int CHECK_SPINS = 20_000;
    /**
     * The loop. {@code $PPID} is the JVM; after the JVM dies the shell's parent in {@code /proc/$$/stat}
     * (field 4) is another process (init or a subreaper); without {@code /proc}, {@code kill -0} on the
     * JVM's pid fails instead.
     */
    static final String SCRIPT = "while :; do i=0; while [ $i -lt " + CHECK_SPINS + " ]; do i=$((i+1)); done; "
            + "if [ -r /proc/$$/stat ]; then read -r a b c p r < /proc/$$/stat; [ \"$p\" = \"$PPID\" ] || exit 0; "
            + "else kill -0 $PPID 2>/dev/null || exit 0; fi; done";

    /** Set by tests: told the process ids of the loops right after they have started. */
    static volatile Consumer<List<Long>> onStart;

    private final List<Process> processes;
    private final List<Integer> cpus;
    private final Thread hook;

    private BusyLoops(List<Process> processes, List<Integer> cpus) {
        this.processes = processes;
        this.cpus = cpus;
        this.hook = new Thread(this::stop, "tcpx4j-busy-loops-stop");
    }

    /**
     * Starts {@code n} loops (none for 0). {@code procfs} is where the JVM's allowed CPUs are read
     * ({@code self/status}); throws {@link Unavailable} when a loop cannot be started.
     */
    static BusyLoops start(int n, Path procfs) {
        List<Integer> cpus = allowedCpus(procfs);
        List<Process> started = new ArrayList<>();
        BusyLoops loops = new BusyLoops(started, cpus);
        if (n == 0) {
            return loops;
        }
        // registered first: a signal that arrives while the loops start still finds them
        Runtime.getRuntime().addShutdownHook(loops.hook);
        try {
            ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", SCRIPT)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD);
            for (int i = 0; i < n; i++) {
                synchronized (started) {
                    started.add(pb.start());
                }
            }
        } catch (IOException | RuntimeException e) {
            loops.close();
            throw new Unavailable("--busy: cannot start a busy loop (/bin/sh -c): " + e.getMessage());
        }
        LOG.log(System.Logger.Level.DEBUG, "{0}: pids {1}", loops.describe(), loops.pids());
        Consumer<List<Long>> seam = onStart;
        if (seam != null) {
            seam.accept(loops.pids());
        }
        return loops;
    }

    /** How many loops run. */
    int count() {
        synchronized (processes) {
            return processes.size();
        }
    }

    /** The CPUs this JVM (and so each loop) may run on, ascending; null where unknown. */
    List<Integer> cpus() {
        return cpus;
    }

    /** Process ids of the loops. */
    List<Long> pids() {
        synchronized (processes) {
            return processes.stream().map(Process::pid).toList();
        }
    }

    /** "2 busy loops on CPUs 0-1" (without "on ..." where the CPUs are unknown). */
    String describe() {
        return describe(count(), cpus);
    }

    static String describe(int n, List<Integer> cpus) {
        return n + " busy loop" + (n == 1 ? "" : "s") + (cpus == null ? "" : " on CPU" + (cpus.size() == 1 ? " " : "s ")
                + formatCpus(cpus));
    }

    /** Stops every loop and waits for it to end; idempotent. */
    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException | IllegalArgumentException e) {
            // the JVM is shutting down (the hook runs or ran), or the hook was never added
        }
    }

    private void stop() {
        List<Process> all;
        synchronized (processes) {
            all = List.copyOf(processes);
        }
        for (Process p : all) {
            p.destroyForcibly();
        }
        for (Process p : all) {
            try {
                if (!p.waitFor(5, TimeUnit.SECONDS)) {
                    LOG.log(System.Logger.Level.WARNING, "busy loop " + p.pid() + " did not end after SIGKILL");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The {@code Cpus_allowed_list} of {@code procfs/self/status}, or null where absent or unreadable. */
    static List<Integer> allowedCpus(Path procfs) {
        try {
            for (String line : Files.readAllLines(procfs.resolve("self/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return parseCpus(line.substring("Cpus_allowed_list:".length()).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "no CPU list in " + procfs + "/self/status: " + e);
        }
        return null;
    }

    /** A kernel CPU list ("0-3,8,10-11") as CPU numbers, ascending. */
    static List<Integer> parseCpus(String list) {
        TreeSet<Integer> cpus = new TreeSet<>();
        for (String part : list.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int dash = p.indexOf('-');
            int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
            int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
            if (from < 0 || to < from) {
                throw new IllegalArgumentException("bad CPU range " + p);
            }
            for (int c = from; c <= to; c++) {
                cpus.add(c);
            }
        }
        return List.copyOf(cpus);
    }

    /** CPU numbers (ascending) in the kernel's list form: runs of two or more as "a-b". */
    static String formatCpus(List<Integer> cpus) {
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (i < cpus.size()) {
            int j = i;
            while (j + 1 < cpus.size() && cpus.get(j + 1) == cpus.get(j) + 1) {
                j++;
            }
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(cpus.get(i));
            if (j > i) {
                b.append('-').append(cpus.get(j));
            }
            i = j + 1;
        }
        return b.toString();
    }
}
