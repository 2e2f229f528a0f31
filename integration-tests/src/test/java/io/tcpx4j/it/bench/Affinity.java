package io.tcpx4j.it.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * CPU affinity for benchmarks that put both ends of a transfer in one JVM: Linux's {@code taskset},
 * for the whole process (threads started later inherit their creator's set) or for single threads.
 * A bench that gives the target its own CPUs measures the target's limit, not the scheduler's.
 *
 * <p>Thread-safe: each call runs its own {@code taskset}.
 */
final class Affinity {

    private Affinity() {
    }

    /** Every thread of this process, and those its threads start from now on, to {@code cpus} (a taskset list). */
    static void process(String cpus) {
        run(List.of("taskset", "-a", "-p", "-c", cpus, Long.toString(ProcessHandle.current().pid())));
    }

    /** Thread {@code tid} of this process to {@code cpus}. */
    static void thread(int tid, String cpus) {
        run(List.of("taskset", "-p", "-c", cpus, Integer.toString(tid)));
    }

    /** The calling thread to {@code cpus}. */
    static void self(String cpus) {
        try {
            Path me = Files.readSymbolicLink(Path.of("/proc/thread-self"));
            thread(Integer.parseInt(me.getFileName().toString()), cpus);
        } catch (IOException e) {
            throw new IllegalStateException("cannot tell this thread's id: " + e.getMessage(), e);
        }
    }

    private static void run(List<String> command) {
        try {
            Process p = new ProcessBuilder(new ArrayList<>(command)).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (p.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + out.strip());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run taskset: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while setting CPU affinity", e);
        }
    }
}
