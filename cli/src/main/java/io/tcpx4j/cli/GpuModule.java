package io.tcpx4j.cli;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.OptionalBinder;
import io.tcpx4j.cuda.CudaDeviceMemory;
import io.tcpx4j.cuda.CudaUnpacker;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.Unpacker;

/**
 * GPU memory for {@code --mem vram}: cuda-unpack's {@link CudaDeviceMemory} and {@link CudaUnpacker}
 * set as the actual values of the optional {@link DeviceMemory} and {@link Unpacker} bindings that
 * {@code EngineModule} declares with host defaults — so that the engine <em>and</em> the transport
 * (which asks for {@code Optional<DeviceMemory>} to pin bounce pages and stage GPU sources) both get
 * them.
 *
 * <p>Why not {@code CudaUnpackModule}: it binds both keys directly, which Guice rejects beside
 * EngineModule's optional bindings (BINDING_ALREADY_SET), and overriding EngineModule with it still
 * leaves the transport's {@code Optional<DeviceMemory>} on the host default. Once cuda-unpack sets
 * the optional bindings itself, this module can go.
 *
 * <p>{@code configure()} does no I/O; CUDA initialises when the memory is first provisioned.
 */
final class GpuModule extends AbstractModule {

    private final int device;

    GpuModule(int device) {
        this.device = device;
    }

    @Override
    protected void configure() {
        OptionalBinder.newOptionalBinder(binder(), DeviceMemory.class).setBinding().to(CudaDeviceMemory.class);
        OptionalBinder.newOptionalBinder(binder(), Unpacker.class).setBinding().to(CudaUnpacker.class);
    }

    @Provides
    @Singleton
    CudaDeviceMemory memory() {
        return new CudaDeviceMemory();
    }

    @Provides
    @Singleton
    CudaUnpacker unpacker(CudaDeviceMemory memory) {
        return new CudaUnpacker(memory, device);
    }
}
