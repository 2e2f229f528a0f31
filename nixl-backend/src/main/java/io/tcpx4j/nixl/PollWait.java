package io.tcpx4j.nixl;

import io.tcpx4j.domain.idle.CpuContention;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Turns a host's busy poll into a wait in the kernel while the host's CPUs are contended
 * ({@code poll_wait}). A NIXL host learns that a transfer ended or a notification came only by polling
 * ({@code checkXfer}, {@code getNotifs}), and most poll in a tight loop. With {@code progress=thread} the
 * engine's own threads do the work, so on shared CPUs that loop holds a CPU those threads need for the very
 * transfer it polls. A poll that finds nothing new, of something the host last polled less than the
 * window ago (it polls in a loop), therefore waits for the engine's next event (a transfer ending, a
 * notification arriving), at most the window, when the calling thread's CPUs are contended
 * ({@link CpuContention}: the thread waited for a CPU lately, or the host reports CPU pressure). On CPUs
 * that are not contended a poll returns at once, as before; a host that polls now and then (once per step
 * of its own loop) never waits.
 *
 * <p>Thread-safe. The per-item state ({@link Loop}) is written without a lock: two threads polling the same
 * item at once can at worst make one of them wait, or not wait, once.
 */
final class PollWait {

    /** The default window: a few round trips between idle hosts, a small share of a host step. */
    static final Duration DEFAULT_WINDOW = Duration.ofNanos(100_000);
    /** The longest window {@code poll_wait} accepts. */
    static final Duration MAX_WINDOW = Duration.ofSeconds(1);

    /** Whether the calling thread's CPUs are contended. */
    interface Contention {
        boolean contended(long nowNanos);
    }

    /** The calling thread's own {@link CpuContention}. */
    private static final Contention CALLING_THREAD = now -> CpuContention.ofCurrentThread().contended(now);

    private final long windowNanos;
    private final Contention contention;
    private final LongSupplier clock;
    private final AtomicLong events = new AtomicLong();
    private final AtomicInteger waiters = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    /**
     * @param window     the longest wait of one poll, and how soon after the previous empty poll of the same
     *                   item a poll counts as part of a loop; zero turns waiting off
     * @param contention asked before a poll waits
     * @param clock      nanoseconds, for telling polls in a loop
     */
    PollWait(Duration window, Contention contention, LongSupplier clock) {
        this.windowNanos = window.toNanos();
        this.contention = contention;
        this.clock = clock;
    }

    /** Waits under the calling thread's contention, by the system's clock; zero never waits. */
    static PollWait onHost(Duration window) {
        return new PollWait(window, CALLING_THREAD, System::nanoTime);
    }

    /** One polled item (a transfer handle, the notifications): whether the host polls it in a loop. */
    static final class Loop {
        private volatile boolean looping;
        private volatile long lastEmpty;

        /** The item had news: the next empty poll starts a new loop. */
        void reset() {
            looping = false;
        }
    }

    /** Whether a poll may ever wait (a window above zero); without, nobody needs {@link #signal}. */
    boolean waits() {
        return windowNanos > 0;
    }

    /** How many events so far; read it before looking and pass it to {@link #afterEmpty}. */
    long events() {
        return events.get();
    }

    /** Something a poll reports happened: wakes every poll that waits. */
    void signal() {
        events.incrementAndGet();
        if (waiters.get() > 0) {
            lock.lock();
            try {
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Called after a poll of {@code item} found nothing new: waits for the next event, at most the window,
     * if the host polls the item in a loop and the calling thread's CPUs are contended.
     *
     * @param seen {@link #events()} as read before the poll looked, so that an event since then ends the
     *             wait at once
     * @return whether it waited, so the caller looks again
     */
    boolean afterEmpty(Loop item, long seen) {
        if (windowNanos == 0) {
            return false;
        }
        long now = clock.getAsLong();
        boolean waited = item.looping && now - item.lastEmpty <= windowNanos && contention.contended(now);
        if (waited) {
            await(seen);
        }
        item.looping = true;
        item.lastEmpty = waited ? clock.getAsLong() : now;
        return waited;
    }

    private void await(long seen) {
        waiters.incrementAndGet();
        lock.lock();
        try {
            long left = windowNanos;
            while (events.get() == seen && left > 0) {
                left = changed.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
            waiters.decrementAndGet();
        }
    }
}
