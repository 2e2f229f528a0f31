package io.tcpx4j.domain.lifecycle;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.EngineMemory;
import io.tcpx4j.api.EngineScatterGather;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.Transport;
import io.tcpx4j.api.spi.EngineProvider;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;

import java.util.Objects;

/**
 * The engine behind {@link io.tcpx4j.api.TransferEngines}, registered for {@link java.util.ServiceLoader} in
 * this module's {@code META-INF/services}: builds an {@link Engine} over the adapters handed over, starts it
 * through a {@link Lifecycle} (warm-up included) and returns it wrapped so that closing it stops the
 * lifecycle. The api's types are accepted only as this module's SPI ({@link NetTransport},
 * {@link DeviceMemory}, {@link ScatterGather}), which every transport and memory module implements.
 *
 * <p>Thread-safe (no state).
 */
public final class DomainEngineProvider implements EngineProvider {

    /** For {@link java.util.ServiceLoader}. */
    public DomainEngineProvider() {
    }

    @Override
    public TransferEngine create(EngineConfig config, Transport transport) {
        return create(config, transport, new HostMemory(), new CpuScatterGather());
    }

    @Override
    public TransferEngine create(EngineConfig config, Transport transport, EngineMemory memory,
                                 EngineScatterGather scatterGather) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(scatterGather, "scatterGather");
        Lifecycle lifecycle;
        try {
            NetTransport net = spi(transport, NetTransport.class);
            DeviceMemory deviceMemory = spi(memory, DeviceMemory.class);
            ScatterGather sg = spi(scatterGather, ScatterGather.class);
            Engine engine = new Engine(io.tcpx4j.domain.EngineConfig.from(config), net, deviceMemory, sg,
                    Clock.SYSTEM);
            lifecycle = new Lifecycle(engine, config, net, sg, deviceMemory, Clock.SYSTEM);
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

    /** {@code given} as the SPI type this engine drives, or INVALID_PARAM for an object made for another engine. */
    private static <T> T spi(Object given, Class<T> type) {
        if (!type.isInstance(given)) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, given.getClass().getName()
                    + " is not a " + type.getName() + ": the engine takes only what tcpx4j's transport and memory"
                    + " modules make");
        }
        return type.cast(given);
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
