package io.tcpx4j.cli;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;

/**
 * Tells whether the JVM's JIT compilers have finished anything lately, from the total compilation time
 * the JVM reports: a total that has not moved for a while means the code being run is compiled. On a
 * host with few CPUs a compiler thread takes its CPU from the threads that move the bytes (a spinning
 * caller, the progress agent), so rows measured while it runs read slower and with millisecond P99s.
 *
 * <p><b>Not thread-safe.</b>
 */
public final class JitQuiet {

    private final LongSupplier totalMillis;
    private long lastTotal = Long.MIN_VALUE;
    private long changedAt;

    /** @param totalMillis the accumulated compilation time; null when the JVM does not tell (then always quiet) */
    JitQuiet(LongSupplier totalMillis) {
        this.totalMillis = totalMillis;
    }

    /** The running JVM's compilers (always quiet where it keeps no compilation time). */
    public static JitQuiet ofThisJvm() {
        CompilationMXBean bean = ManagementFactory.getCompilationMXBean();
        return new JitQuiet(bean != null && bean.isCompilationTimeMonitoringSupported()
                ? bean::getTotalCompilationTime : null);
    }

    /**
     * Whether the compilation total has stayed the same for at least {@code quietNanos} up to
     * {@code nowNanos}; the first call only takes note of it (false).
     */
    public boolean quietFor(long quietNanos, long nowNanos) {
        if (totalMillis == null) {
            return true;
        }
        long total = totalMillis.getAsLong();
        if (total != lastTotal) {
            lastTotal = total;
            changedAt = nowNanos;
            return false;
        }
        return nowNanos - changedAt >= quietNanos;
    }
}
