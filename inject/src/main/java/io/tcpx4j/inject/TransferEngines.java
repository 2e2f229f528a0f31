package io.tcpx4j.inject;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;

import java.util.Objects;

/**
 * Builds and starts an engine without an injector: what {@link EngineModule} and {@link EngineLifecycle} do
 * for applications that use Guice, in one call. The transport comes from a transport module
 * ({@code new LoopbackTransport(...)}, or TCPX's on A3 hosts), built by the application and handed over.
 *
 * <p>The engine returned owns what it was given and made: its {@code close()} stops the warm-up if one still
 * runs, fails transfers in flight with CANCELED, then closes the transport, the scatter-gather and the
 * device memory, in that order (as {@link EngineLifecycle#stop()} does). If the engine cannot be built or
 * started, they are closed before the exception propagates.
 *
 * <p>Thread-safe (no state).
 */
public final class TransferEngines {

    private TransferEngines() {
    }

    /** An engine over {@code transport} that moves host memory (copies and gathers by the CPU). */
    public static TransferEngine create(EngineConfig config, NetTransport transport) {
        return create(config, transport, new HostMemory(), new CpuScatterGather());
    }

    /**
     * An engine over {@code transport} whose memory services are the caller's, e.g. a GPU's from the
     * cuda-unpack module; the first agent uses {@code scatterGather}, further agents get their own from it.
     */
    public static TransferEngine create(EngineConfig config, NetTransport transport, DeviceMemory memory,
                                        ScatterGather scatterGather) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(scatterGather, "scatterGather");
        EngineLifecycle lifecycle;
        try {
            Engine engine = new Engine(io.tcpx4j.domain.EngineConfig.from(config), transport, memory, scatterGather,
                    Clock.SYSTEM);
            lifecycle = new EngineLifecycle(engine, config, transport, scatterGather, memory, Clock.SYSTEM);
        } catch (RuntimeException e) {
            closeAll(e, transport, scatterGather, memory);
            throw e;
        }
        try {
            return new OwningEngine(lifecycle.start(), lifecycle);
        } catch (RuntimeException e) {
            try {
                lifecycle.stop();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static void closeAll(RuntimeException cause, AutoCloseable... resources) {
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                cause.addSuppressed(e);
            }
        }
    }
}
