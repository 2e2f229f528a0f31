package io.tcpx4j.inject;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.lifecycle.Lifecycle;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.warmup.WarmUp;
import jakarta.inject.Inject;

/**
 * Starts and stops the injector's engine and closes what it owns: the domain's {@link Lifecycle} (the one
 * that {@link io.tcpx4j.api.TransferEngines} also runs) over the injector's bindings. {@link #stop()}
 * closes, in order, the warm-up if one still runs, the engine (failing transfers still in flight with
 * CANCELED), the transport, the scatter-gather and the device memory.
 *
 * <p>With {@link EngineConfig#warmUpTransfers()} above 0, {@link #start()} also starts a {@link WarmUp}: two
 * private engines of the same configuration, transport and memory that exchange transfers in the
 * background so the JIT has compiled the transfer paths before the application's first transfer.
 *
 * <p>Thread-safe. {@code start} once; {@code stop} is idempotent.
 */
public final class EngineLifecycle implements AutoCloseable {

    private final Lifecycle lifecycle;

    @Inject
    public EngineLifecycle(Engine engine, EngineConfig config, NetTransport transport, ScatterGather scatterGather,
                           DeviceMemory memory, Clock clock) {
        this.lifecycle = new Lifecycle(engine, config, transport, scatterGather, memory, clock);
    }

    /**
     * Binds the control listeners, starts the progress threads (where the configuration's progress says so)
     * and, if configured, the warm-up; returns the engine. Stopping the lifecycle, not closing the engine,
     * also closes the transport and memory.
     */
    public TransferEngine start() {
        return lifecycle.start();
    }

    /** The running or finished warm-up, or null when none was started. */
    public WarmUp warmUp() {
        return lifecycle.warmUp();
    }

    /** Closes the warm-up if it still runs, the engine, the transport, the scatter-gather and the memory. */
    public void stop() {
        lifecycle.stop();
    }

    @Override
    public void close() {
        stop();
    }
}
