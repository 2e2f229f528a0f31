package io.tcpx4j.domain.port.out;

/**
 * How a thread that does work on its own stays off it while callers do that work for it: the engine's
 * agent thread while a host calls {@code TransferEngine.progress()}, a transport's I/O thread while
 * callers {@link NetTransport#drive() drive} it. Each call holds a lease that runs for a fixed time from
 * its end; the thread parks until the lease is over, then takes over. A thread that wakes to find the
 * lease renewed (a host polling without pause) parks twice as long as before, up to a cap, and starts
 * again from the lease once it has taken over; a host whose calls come with gaps longer than the lease
 * (a serving loop's steps) finds the thread back within the lease.
 *
 * <p>The cap is the longest the thread stays away after a host that polled without pause stops: work
 * that arrives in that time (a peer's frame, a connection) waits for the next call or for the thread.
 * In exchange the thread wakes at most 1/cap times a second instead of once per lease while the host
 * polls; each wake takes a core from the host's poller, which on a host whose pollers hold every core
 * is a transfer held up.
 *
 * <p><b>Not thread-safe</b>: one per standing-aside thread, used by that thread only.
 */
public final class StandAside {

    /**
     * The cap the engine's agent thread and the loopback transport's I/O threads use: while a host polls
     * without pause each wakes 125 times a second rather than once per 1 ms lease.
     */
    public static final long MAX_PARK_NANOS = 8_000_000;

    private final long maxParkNanos;
    /** The last park while the lease held; 0 once the thread took over. */
    private long lastPark;

    /** @param maxParkNanos the longest park, at least 1 ns; parks never end before the lease. */
    public StandAside(long maxParkNanos) {
        if (maxParkNanos < 1) {
            throw new IllegalArgumentException("maxParkNanos must be positive, not " + maxParkNanos);
        }
        this.maxParkNanos = maxParkNanos;
    }

    /**
     * How long to park, given that the callers' lease runs for {@code leaseLeftNanos} more: 0 when it
     * is over (the thread takes over); otherwise the rest of the lease at first, then twice the last
     * park, capped, for as long as each call finds the lease renewed.
     */
    public long parkNanos(long leaseLeftNanos) {
        if (leaseLeftNanos <= 0) {
            lastPark = 0;
            return 0;
        }
        long doubled = lastPark == 0 ? 0 : Math.min(2 * lastPark, maxParkNanos);
        lastPark = Math.max(leaseLeftNanos, doubled);
        return lastPark;
    }
}
