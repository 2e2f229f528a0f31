package io.tcpx4j.domain.idle;

import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Whether the calling thread's CPUs are lately contended: the thread itself has had to wait for a CPU, or
 * the host's CPUs are oversubscribed ({@link CpuPressure}), each looked at again at most every
 * {@link #INTERVAL_NANOS}. The thread's own wait comes from the kernel's per-thread {@code schedstat} (time
 * runnable on a run queue, and how often the thread was put on a CPU): contended while each turn on a CPU
 * was preceded by more than {@link #CONTENDED_WAIT_NANOS} of waiting on average. On an idle CPU a woken thread runs within a few
 * microseconds; where other runnable threads share the CPU (a busy host, or more of the engine's threads
 * than CPUs) it waits for them. A driver spins only while it is not contended: there a spin takes the
 * CPU from the thread whose event it waits for, and spends the spinner's claim on the scheduler, so that
 * after its next block it no longer preempts the threads it shares the CPU with.
 *
 * <p><b>Not thread-safe</b>: one per thread, used by that thread only (the counter read is the
 * calling thread's).
 */
public final class CpuContention {

    /** How often the run-queue time is read and the host's pressure asked. */
    static final long INTERVAL_NANOS = 10_000_000;
    /** Average wait for a CPU per turn on one above which the thread counts as contended. */
    static final long CONTENDED_WAIT_NANOS = 20_000;

    private static final Path SCHEDSTAT = Path.of("/proc/thread-self/schedstat");
    private static final ThreadLocal<CpuContention> PER_THREAD =
            ThreadLocal.withInitial(CpuContention::fromSchedstat);

    private final Sample sample;
    private final CpuPressure pressure;
    /** Whether {@link #contended} has looked at both signals yet, and when it last did. */
    private boolean checked;
    private long lastCheck;
    /** Whether the thread's own counters have been read once, and what they said then. */
    private boolean counted;
    private long lastRunQueue;
    private long lastTurns;
    /** The answers of the last look: the thread's own waits were long; the host was under pressure. */
    private boolean waits;
    private boolean pressured;
    private boolean unavailable;

    /** Reads the calling thread's counters into {@code into}: {run-queue nanoseconds, turns on a CPU}. */
    interface Sample {
        /** False where the counters are unknown. */
        boolean read(long[] into);
    }

    private final long[] counters = new long[2];

    public CpuContention(Sample sample, CpuPressure pressure) {
        this.sample = sample;
        this.pressure = pressure;
    }

    /**
     * A new instance for the thread that will use it, reading that thread's {@code schedstat} and the
     * host's CPU pressure.
     */
    public static CpuContention fromSchedstat() {
        return new CpuContention(CpuContention::readSchedstat, CpuPressure.host());
    }

    /** The calling thread's instance. */
    public static CpuContention ofCurrentThread() {
        return PER_THREAD.get();
    }

    /**
     * Whether the thread's turns on a CPU were lately preceded by long waits for one, or the host's CPUs
     * are under pressure; both are looked at again at most every {@link #INTERVAL_NANOS}, so the call is
     * cheap enough for every wait of a transfer.
     */
    public boolean contended(long nowNanos) {
        if (!checked || nowNanos - lastCheck >= INTERVAL_NANOS) {
            checked = true;
            lastCheck = nowNanos;
            pressured = pressure.pressured();
            if (!unavailable) {
                readOwnWaits();
            }
        }
        return waits || pressured;
    }

    private void readOwnWaits() {
        if (!sample.read(counters)) {
            unavailable = true;
            waits = false;
            return;
        }
        long turns = counters[1] - lastTurns;
        if (counted && turns > 0) {
            waits = (counters[0] - lastRunQueue) / turns > CONTENDED_WAIT_NANOS;
        }
        counted = true;
        lastRunQueue = counters[0];
        lastTurns = counters[1];
    }

    /**
     * The second and third fields of {@code /proc/thread-self/schedstat}: nanoseconds spent runnable on a
     * run queue, and turns on a CPU. False where the file cannot be read.
     */
    static boolean readSchedstat(long[] into) {
        ByteBuffer buf = CpuPressure.readProc(SCHEDSTAT, 96);
        if (buf == null) {
            return false;
        }
        long value = 0;
        int field = 0;
        boolean inNumber = false;
        while (buf.hasRemaining() && field < 3) {
            byte b = buf.get();
            if (b >= '0' && b <= '9') {
                value = value * 10 + (b - '0');
                inNumber = true;
            } else if (inNumber) {
                if (field > 0) {
                    into[field - 1] = value;
                }
                field++;
                value = 0;
                inNumber = false;
            }
        }
        if (inNumber && field == 2) {
            into[1] = value;
            field++;
        }
        return field == 3;
    }
}
