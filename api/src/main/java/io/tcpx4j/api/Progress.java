package io.tcpx4j.api;

import java.time.Duration;
import java.util.Objects;

/**
 * Who drives an engine's progress agents, and how long a driver that found nothing to do spins before it
 * blocks in the kernel ({@link EngineConfig#progress()}).
 *
 * <p>Exactly one driver per agent, never two taking turns:
 * <ul>
 *   <li>{@link Driver#THREAD}: each agent runs on a thread of its own. {@link Transfer#await} blocks until
 *       that thread ends the transfer; {@link TransferEngine#progress()} does nothing.</li>
 *   <li>{@link Driver#CALLER}: no thread; application threads run the agents through
 *       {@link TransferEngine#progress()}, {@link TransferEngine#driveUntilEnded} and {@link Transfer#await},
 *       one at a time. Nothing moves (heartbeats included) while no thread calls, so a caller calls at least
 *       every {@link EngineConfig#heartbeat()}.</li>
 * </ul>
 * A driver that finds no work spins for {@link #spin()}, then blocks on the agent's sockets and wake-ups
 * until one of them is ready (docs/CONFIG.md, "Progress and threads").
 *
 * @param driver the agents' driver
 * @param spin   how long an idle driver spins before it blocks; 0 blocks at once, at most {@link #MAX_SPIN}
 */
public record Progress(Driver driver, Duration spin) {

    /** Who runs the agents. */
    public enum Driver {
        /** A thread of the engine's per agent (the default). */
        THREAD,
        /** The application's threads, through the engine's progress calls. */
        CALLER
    }

    /** The default spin: about a round trip between idle hosts, so back-to-back steps need no wake-up. */
    public static final Duration DEFAULT_SPIN = Duration.ofNanos(50_000);
    /** The longest spin. */
    public static final Duration MAX_SPIN = Duration.ofSeconds(1);

    /** Checks both values; a spin out of range fails with {@code INVALID_PARAM}. */
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
