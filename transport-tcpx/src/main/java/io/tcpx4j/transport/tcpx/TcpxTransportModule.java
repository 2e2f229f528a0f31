package io.tcpx4j.transport.tcpx;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;

import java.util.Objects;

/**
 * Installs the TCPX transport. Install it beside the engine module (and {@code CudaUnpackModule} on
 * GPU hosts) instead of the loopback transport module.
 *
 * <p>Bindings provided:
 * <ul>
 *   <li>{@link TcpxOptions}: the instance given to the constructor;</li>
 *   <li>{@link TcpxTransport}, singleton, and {@link NetTransport} to the same instance.</li>
 * </ul>
 * Bindings required: {@link DeviceMemory} (CudaUnpackModule binds the CUDA one; on a host without a GPU
 * the composition root binds HostMemory).
 *
 * <p>{@code configure()} does no I/O: the plugin is found, probed, dlopen'ed and initialised only
 * when the transport is first provisioned; a failure surfaces then as a ProvisionException whose cause
 * is the TransferException saying what to fix. The transport is AutoCloseable; the composition root's
 * lifecycle closes it.
 */
public final class TcpxTransportModule extends AbstractModule {

    private final TcpxOptions options;

    /** With {@link TcpxOptions#defaults()}. */
    public TcpxTransportModule() {
        this(TcpxOptions.defaults());
    }

    public TcpxTransportModule(TcpxOptions options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    @Override
    protected void configure() {
        bind(TcpxOptions.class).toInstance(options);
        bind(NetTransport.class).to(TcpxTransport.class);
    }

    @Provides
    @Singleton
    TcpxTransport tcpxTransport(TcpxOptions tcpxOptions, DeviceMemory deviceMemory) {
        return TcpxTransport.open(tcpxOptions, deviceMemory);
    }
}
