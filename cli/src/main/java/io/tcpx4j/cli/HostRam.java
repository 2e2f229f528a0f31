package io.tcpx4j.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How much host memory a run may take. Linux overcommits: allocating more than is available
 * succeeds and the process is killed later, when the pattern fill or the transfers touch the pages,
 * so runs check sizes against {@code MemAvailable} before allocating.
 */
final class HostRam {

    private HostRam() {
    }

    /** {@code MemAvailable} of {@code procfs/meminfo} in bytes, or -1 when it cannot be read. */
    static long available(Path procfs) {
        try {
            for (String line : Files.readAllLines(procfs.resolve("meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    String[] f = line.substring("MemAvailable:".length()).trim().split("\\s+");
                    long n = Long.parseLong(f[0]);
                    return f.length > 1 && f[1].equalsIgnoreCase("kB") ? n * 1024 : n;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or an unreadable file: allocation failures are still reported in one line
        }
        return -1;
    }

    /**
     * A one-line problem when {@code bytes} of host memory are more than {@code procfs} says are
     * available, else null.
     */
    static String shortage(long bytes, Path procfs, String what) {
        long available = available(procfs);
        if (available < 0 || bytes <= available) {
            return null;
        }
        return what + " needs " + gib(bytes) + " of host memory; this host has " + gib(available) + " available";
    }

    static String gib(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }
}
