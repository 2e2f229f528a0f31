package io.tcpx4j.domain;

import io.tcpx4j.api.TransferException;

import java.time.Duration;
import java.util.Objects;

/**
 * Who drives an engine's progress agents, and how long a driver that found nothing to do spins before it
 * blocks in the kernel.
 *
 * <p>Exactly one driver per agent, never two taking turns:
 * <ul>
 *   <li>{@link Driver#THREAD}: each agent runs on a thread of its own. {@code Transfer.await} blocks until
 *       that thread ends the transfer; {@code TransferEngine.progress()} does nothing.</li>
 *   <li>{@link Driver#CALLER}: no thread; application threads run the agents through
 *       {@code progress()}, {@code driveUntilEnded} and {@code Transfer.await}, one at a time. Nothing moves
 *       (heartbeats included) while no thread calls, so a caller calls at least every heartbeat.</li>
 * </ul>
 * A driver that finds no work spins for {@link #spin()} (not while its thread has lately waited for a
 * CPU: {@code CpuContention}), then blocks on the agent's sockets (control
 * streams, listener) and its wake-ups (commands, transport completions) until one of them is ready: the
 * kernel wakes the thread that handles the event. While requests are out on a transport that cannot
 * signal completions (TCPX completes requests only inside {@code test}), or a GPU batch runs, it polls
 * instead, with parks that start at {@link #MIN_PARK_NANOS} and double up to {@link #MAX_PARK_NANOS}.
 *
 * @param driver the agents' driver
 * @param spin   how long an idle driver spins before it blocks or parks; 0 blocks at once, at most 1 s
 */
public record Progress(Driver driver, Duration spin) {

    /** Who runs the agents. */
    public enum Driver {
        /** A thread of the engine's per agent (the default). */
        THREAD,
        /** The application's threads, through the engine's progress calls. */
        CALLER
    }

    /** The first park of a driver that polls a transport which cannot signal completions. */
    public static final long MIN_PARK_NANOS = 1_000;
    /** The longest park of such a driver. */
    public static final long MAX_PARK_NANOS = 50_000;
    /** The default spin: about a round trip between idle hosts, so back-to-back steps need no wake-up. */
    public static final Duration DEFAULT_SPIN = Duration.ofNanos(50_000);
    private static final Duration MAX_SPIN = Duration.ofSeconds(1);

    public Progress {
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(spin, "spin");
        if (spin.isNegative() || spin.compareTo(MAX_SPIN) > 0) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "progress spin must be 0..1 s, was " + spin);
        }
    }

    /** A thread per agent that spins {@link #DEFAULT_SPIN} before blocking. */
    public static Progress defaults() {
        return new Progress(Driver.THREAD, DEFAULT_SPIN);
    }

    public Progress withDriver(Driver v) {
        return new Progress(v, spin);
    }

    public Progress withSpin(Duration v) {
        return new Progress(driver, v);
    }
}
