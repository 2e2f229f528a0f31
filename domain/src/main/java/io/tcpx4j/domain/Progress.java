package io.tcpx4j.domain;

import java.time.Duration;
import java.util.Objects;

/**
 * Who drives an engine's progress agents, and how long a driver that found nothing to do spins before it
 * blocks in the kernel: the domain's copy of the application's {@link io.tcpx4j.api.Progress}, whose
 * Javadoc states what each driver does, and whose rules this record checks through it
 * ({@link #from}, {@link #toApi}).
 *
 * <p>A driver that finds no work spins for {@link #spin()} (not while its thread has lately waited for a
 * CPU: {@code CpuContention}), then blocks on the agent's sockets (control streams, listener) and its
 * wake-ups (commands, transport completions) until one of them is ready: the kernel wakes the thread that
 * handles the event. While requests are out on a transport that cannot signal completions (TCPX completes
 * requests only inside {@code test}), or a GPU batch runs, it polls instead, with parks that start at
 * {@link #MIN_PARK_NANOS} and double up to {@link #MAX_PARK_NANOS}.
 *
 * @param driver the agents' driver
 * @param spin   how long an idle driver spins before it blocks or parks; 0 blocks at once, at most 1 s
 */
public record Progress(Driver driver, Duration spin) {

    /** Who runs the agents ({@link io.tcpx4j.api.Progress.Driver}). */
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
    /** The default spin ({@link io.tcpx4j.api.Progress#DEFAULT_SPIN}). */
    public static final Duration DEFAULT_SPIN = io.tcpx4j.api.Progress.DEFAULT_SPIN;

    /** Checks both values by the api record's rules. */
    public Progress {
        Objects.requireNonNull(driver, "driver");
        new io.tcpx4j.api.Progress(io.tcpx4j.api.Progress.Driver.valueOf(driver.name()), spin);
    }

    /** The application's setting as the domain reads it. */
    public static Progress from(io.tcpx4j.api.Progress p) {
        return new Progress(Driver.valueOf(p.driver().name()), p.spin());
    }

    /** This setting as the application's type. */
    public io.tcpx4j.api.Progress toApi() {
        return new io.tcpx4j.api.Progress(io.tcpx4j.api.Progress.Driver.valueOf(driver.name()), spin);
    }

    /** A thread per agent that spins {@link #DEFAULT_SPIN} before blocking. */
    public static Progress defaults() {
        return from(io.tcpx4j.api.Progress.defaults());
    }

    public Progress withDriver(Driver v) {
        return new Progress(v, spin);
    }

    public Progress withSpin(Duration v) {
        return new Progress(driver, v);
    }
}
