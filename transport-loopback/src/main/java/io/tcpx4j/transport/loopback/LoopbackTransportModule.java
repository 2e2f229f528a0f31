package io.tcpx4j.transport.loopback;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.OptionalBinder;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;

import java.util.Objects;
import java.util.Optional;

/**
 * Installs the loopback transport. Install it beside the engine module, instead of the TCPX module.
 *
 * <p>Bindings provided:
 * <ul>
 *   <li>{@link NetTransport} -> a singleton {@link LoopbackTransport} built from the given
 *       {@link LoopbackConfig}. It starts its I/O threads, if any, at the first listen or connect, never at
 *       injection; the composition root closes it ({@link NetTransport#close()}).</li>
 *   <li>{@link LoopbackConfig} -> the given config.</li>
 * </ul>
 * <p>Bindings used, not provided: an optional {@link DeviceMemory}. This module only declares it
 * optional ({@link OptionalBinder}); whoever owns device memory (the engine or cuda-unpack module)
 * binds it. When it is bound and has devices, bounce pages are pinned and CUDA sources are staged.
 *
 * <p>{@code configure()} does no I/O.
 */
public final class LoopbackTransportModule extends AbstractModule {

    private final LoopbackConfig config;

    public LoopbackTransportModule(LoopbackConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    /**
     * The {@link LoopbackConfig#defaults() default} config with devmem off: 127.0.0.1, and host receives
     * land in place, as they do on TCPX (bounce pages only for CUDA memory). What the NIXL backend's
     * {@code transport=loopback} loads.
     */
    public LoopbackTransportModule() {
        this(LoopbackConfig.defaults().withDevmem(false));
    }

    @Override
    protected void configure() {
        bind(LoopbackConfig.class).toInstance(config);
        OptionalBinder.newOptionalBinder(binder(), DeviceMemory.class);
    }

    @Provides
    @Singleton
    NetTransport transport(LoopbackConfig config, Optional<DeviceMemory> deviceMemory) {
        return new LoopbackTransport(config, deviceMemory.orElse(null));
    }
}
