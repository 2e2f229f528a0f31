package io.tcpx4j.cuda;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.multibindings.OptionalBinder;
import com.google.inject.Singleton;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.ScatterGather;

/**
 * Guice bindings for GPU hosts. Install it beside {@code EngineModule} and one transport module.
 *
 * <p>Provides (all singletons):
 * <ul>
 *   <li>{@link DeviceMemory} (set on the optional binding that EngineModule declares) and
 *       {@link CudaDeviceMemory}: the same {@link CudaDeviceMemory};</li>
 *   <li>{@link ScatterGather} (likewise) and {@link CudaScatterGather}: one {@link CudaScatterGather} on GPU
 *       {@code device} with {@link CudaScatterGather.Settings#DEFAULT}.</li>
 * </ul>
 *
 * <p>{@code configure()} touches no native code: CUDA initialises when a binding is first
 * provisioned (in {@code Stage.PRODUCTION} Guice does that while creating the injector). Without a
 * usable driver, provisioning fails with a {@code TransferException} (NOT_SUPPORTED) saying why:
 * this module is for machines with a GPU, and there is no silent fallback. Whoever owns the injector
 * closes the scatter-gather, then the memory.
 */
public final class CudaUnpackModule extends AbstractModule {

    private final int device;

    /** Binds the scatter-gather to GPU 0. */
    public CudaUnpackModule() {
        this(0);
    }

    /** Binds the scatter-gather to GPU {@code device} (the one this engine's NIC is paired with). */
    public CudaUnpackModule(int device) {
        if (device < 0) {
            throw new IllegalArgumentException("negative GPU ordinal " + device);
        }
        this.device = device;
    }

    @Override
    protected void configure() {
        // EngineModule declares both as optional bindings with host defaults; set them, so the engine
        // and every transport that takes an Optional<DeviceMemory> see the GPU ones.
        OptionalBinder.newOptionalBinder(binder(), DeviceMemory.class).setBinding().to(CudaDeviceMemory.class);
        OptionalBinder.newOptionalBinder(binder(), ScatterGather.class).setBinding().to(CudaScatterGather.class);
    }

    @Provides
    @Singleton
    CudaDeviceMemory deviceMemory() {
        return new CudaDeviceMemory();
    }

    @Provides
    @Singleton
    CudaScatterGather unpacker(CudaDeviceMemory memory) {
        return new CudaScatterGather(memory, device);
    }
}
