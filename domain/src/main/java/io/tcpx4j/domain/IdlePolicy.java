package io.tcpx4j.domain;

/**
 * How the engine's progress thread waits when a duty cycle found nothing to do.
 *
 * <p>While requests are in flight the transport must be polled (TCPX completes requests only inside
 * {@code test}); the policy decides how eagerly. With nothing in flight, {@link #ADAPTIVE} and
 * {@link #LOW_CPU} block until a command, a control frame, a new connection or a transport event
 * arrives, so an idle engine costs next to no CPU. The thread runs only in {@code Engine.start()}'s
 * threaded mode; a caller that pumps {@code doWork()} itself waits as it likes.
 */
public enum IdlePolicy {

    /**
     * Default. After work: 100 spins and 20 yields, about a round trip (10 and 5 on hosts with fewer
     * than 8 processors, where a spinning agent takes the CPU the transport's I/O threads need). Then,
     * in flight: parks for 1 µs doubling up to 50 µs (a transport that signals completions cuts the
     * park short); idle: blocks. Costs up to one core while data moves, under 1 % of a core idle.
     * On Linux a park shorter than the thread's timer slack (50 µs by default) sleeps about that long:
     * 57 µs for a 1 µs park on a 16-CPU H100 host, 78 µs on a 2-CPU one. Waits that
     * nothing signals (a GPU copy or unpack kernel, TCPX's {@code test}) are therefore looked at about
     * every 60-80 µs once the spins and yields are over.
     */
    ADAPTIVE(Host.MANY_CORES ? 100 : 10, Host.MANY_CORES ? 20 : 5, 1_000L, 50_000L, true),

    /**
     * For a dedicated core: never parks, never blocks, idle or not. Lowest latency; always one full core.
     */
    BUSY_SPIN(Integer.MAX_VALUE, 0, 0L, 0L, false),

    /**
     * For hosts where CPU is scarcer than latency: no spinning, one yield; in flight it parks for 20 µs
     * doubling up to 1 ms. Idle: blocks. Adds up to about a millisecond per protocol step.
     */
    LOW_CPU(0, 1, 20_000L, 1_000_000L, true);

    final int spins;
    final int yields;
    final long minParkNanos;
    final long maxParkNanos;
    final boolean blocksWhenIdle;

    IdlePolicy(int spins, int yields, long minParkNanos, long maxParkNanos, boolean blocksWhenIdle) {
        this.spins = spins;
        this.yields = yields;
        this.minParkNanos = minParkNanos;
        this.maxParkNanos = maxParkNanos;
        this.blocksWhenIdle = blocksWhenIdle;
    }

    private static final class Host {
        static final boolean MANY_CORES = Runtime.getRuntime().availableProcessors() >= 8;
    }
}
