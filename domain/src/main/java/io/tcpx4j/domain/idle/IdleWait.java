package io.tcpx4j.domain.idle;

import io.tcpx4j.domain.port.out.Clock;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.locks.LockSupport;

/**
 * How a driver of a progress agent waits after duty cycles that found nothing to do: it spins for the
 * configured time (the next event is usually a round trip away) unless its CPUs are contended
 * ({@link CpuContention}: then the spin would only delay the threads it waits for), then asks its
 * {@link Waiter} to block in the kernel until an event; where something in flight must be polled instead (a transport that
 * cannot signal completions, a GPU batch), it parks for {@link #MIN_PARK_NANOS}, doubling up to
 * {@link #MAX_PARK_NANOS}, until work turns up.
 *
 * <p><b>Not thread-safe</b>: one per driving thread.
 */
public final class IdleWait implements IdleStrategy {

    /** The first park of a driver that polls (on Linux a park lasts at least the thread's timer slack). */
    static final long MIN_PARK_NANOS = 1_000;
    /** The longest park of a driver that polls: how late it may see a completion it polls for. */
    static final long MAX_PARK_NANOS = 50_000;

    /** Blocks until an event can move the agent on, if only events can. */
    public interface Waiter {
        /**
         * Blocks until a watched socket is ready, a wake-up comes or a timeout passes, and returns true
         * (at once where work is waiting already); returns false at once if something in flight must be
         * polled.
         */
        boolean awaitEvent();
    }

    private final long spinNanos;
    private final Waiter waiter;
    private final CpuContention contention;
    private final Clock clock;
    /** The spin of the current run of empty cycles: {@link #spinNanos}, or 0 on a contended CPU. */
    private long spinNow;
    /** Whether the last cycle found nothing to do, and since when. */
    private boolean idling;
    private long idleSince;
    private long parkNanos;

    /** {@code clock} times the spin and the contention checks. */
    public IdleWait(long spinNanos, Waiter waiter, CpuContention contention, Clock clock) {
        this.spinNanos = spinNanos;
        this.waiter = waiter;
        this.contention = contention;
        this.clock = clock;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        long now = clock.nanoTime();
        if (!idling) {
            idling = true;
            idleSince = now;
            spinNow = spinNanos > 0 && contention.contended(now) ? 0 : spinNanos;
        }
        if (now - idleSince < spinNow) {
            Thread.onSpinWait();
            return;
        }
        if (waiter.awaitEvent()) {
            // the kernel woke us for an event; if the next cycle finds nothing, block again at once
            parkNanos = 0;
            return;
        }
        parkNanos = parkNanos == 0 ? MIN_PARK_NANOS : Math.min(2 * parkNanos, MAX_PARK_NANOS);
        LockSupport.parkNanos(parkNanos);
    }

    @Override
    public void reset() {
        idling = false;
        parkNanos = 0;
    }

    /** The last park's length; 0 after work or an event. For tests. */
    long lastParkNanos() {
        return parkNanos;
    }
}
