package io.tcpx4j.inject;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.OptionalBinder;
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
 * The engine and its configuration, for applications that compose with Guice
 * ({@link io.tcpx4j.api.TransferEngines} builds the same without it). Install it beside one transport module,
 * which binds {@link NetTransport}:
 *
 * <pre>{@code
 * Injector injector = Guice.createInjector(new EngineModule(config), new LoopbackTransportModule());
 * EngineLifecycle life = injector.getInstance(EngineLifecycle.class);
 * TransferEngine engine = life.start();
 * }</pre>
 *
 * <p>Bindings provided:
 * <ul>
 *   <li>{@link EngineConfig} — the instance given to the constructor, and the domain's
 *       {@link io.tcpx4j.domain.EngineConfig} made from it;</li>
 *   <li>{@link Engine} and {@link TransferEngine} — one engine per injector, created but not started
 *       (no sockets are opened until {@link EngineLifecycle#start()});</li>
 *   <li>{@link EngineLifecycle} — explicit start and stop, and the warm-up
 *       ({@link EngineConfig#warmUpTransfers()}) that {@link EngineLifecycle#start()} runs;</li>
 *   <li>{@link Clock} — the system clock;</li>
 *   <li>{@link DeviceMemory} and {@link ScatterGather} as optional bindings whose defaults are the host-only
 *       {@link HostMemory} and {@link CpuScatterGather}; a GPU module (CudaUnpackModule) sets them with
 *       {@code OptionalBinder.setBinding()}.</li>
 * </ul>
 * Required from elsewhere: {@link NetTransport}. {@code configure()} does no I/O.
 *
 * <p>TLS on the control stream travels inside the configuration
 * ({@link EngineConfig#withControlTls}, an {@code SSLContext} the application builds from its own keys):
 * this module neither loads keys nor has a knob of its own.
 */
public final class EngineModule extends AbstractModule {

    private final EngineConfig config;

    /** An engine of {@code config}, warm-up included. */
    public EngineModule(EngineConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    @Override
    protected void configure() {
        bind(EngineConfig.class).toInstance(config);
        bind(io.tcpx4j.domain.EngineConfig.class).toInstance(io.tcpx4j.domain.EngineConfig.from(config));
        bind(Clock.class).toInstance(Clock.SYSTEM);
        OptionalBinder.newOptionalBinder(binder(), DeviceMemory.class).setDefault().to(HostMemory.class);
        OptionalBinder.newOptionalBinder(binder(), ScatterGather.class).setDefault().to(CpuScatterGather.class);
        bind(HostMemory.class).in(Singleton.class);
        bind(CpuScatterGather.class).in(Singleton.class);
        bind(TransferEngine.class).to(Engine.class);
        bind(EngineLifecycle.class).in(Singleton.class);
    }

    @Provides
    @Singleton
    Engine engine(io.tcpx4j.domain.EngineConfig config, NetTransport transport, DeviceMemory memory, ScatterGather unpacker, Clock clock) {
        return new Engine(config, transport, memory, unpacker, clock);
    }
}
