package io.tcpx4j.domain.port.out;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The lease that keeps a thread with work of its own ({@link StandAside}) off that work while callers do
 * it for it: held while any caller is inside a call ({@link #enter()} .. {@link #exit()}), however long
 * the call runs, and for {@link #NANOS} after the last call ended. One lease may cover several threads:
 * a caller that drives them one after another in a call keeps every one of them off, even while its turn
 * on another takes longer than the lease.
 *
 * <p>Thread-safe; callers on several threads may hold it at once.
 */
public final class CallerLease {

    /** How long the lease runs after the last call ends: a host that polls calls again well within it. */
    public static final long NANOS = 1_000_000;

    private volatile long lastNanos = System.nanoTime() - 2 * NANOS;
    private final AtomicInteger inside = new AtomicInteger();

    /** A caller starts a call. */
    public void enter() {
        inside.incrementAndGet();
        lastNanos = System.nanoTime();
    }

    /** The caller's call ends; the lease runs on from now. */
    public void exit() {
        // set before the caller counts as gone, so the lease never lapses in between
        lastNanos = System.nanoTime();
        inside.decrementAndGet();
    }

    /**
     * How much longer the lease holds as of {@code nowNanos}: {@link #NANOS} while a caller is inside,
     * 0 or less once it is over.
     */
    public long leftNanos(long nowNanos) {
        if (inside.get() > 0) {
            return NANOS;
        }
        return lastNanos + NANOS - nowNanos;
    }

    /** Whether the lease holds as of {@code nowNanos}. */
    public boolean held(long nowNanos) {
        return leftNanos(nowNanos) > 0;
    }
}
