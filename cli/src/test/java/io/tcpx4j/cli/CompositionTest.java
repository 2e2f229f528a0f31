package io.tcpx4j.cli;

import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Key;
import com.google.inject.Stage;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.inject.EngineLifecycle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The injectors the CLI builds are valid Guice compositions (checked without provisioning). */
class CompositionTest {

    @Test
    void everyTransportComposesWithTheEngineModule() {
        for (TransportKind t : TransportKind.values()) {
            // DEVELOPMENT stage: bindings are checked, singletons are not created (no plugin load, no CUDA init)
            Injector dram = Guice.createInjector(Stage.DEVELOPMENT, Backends.compose(EngineConfig.defaults("x"),
                    new Backends.Spec(t, MemoryKind.DRAM, "127.0.0.1")));
            assertThat(dram.getBinding(NetTransport.class)).isNotNull();
            assertThat(dram.getBinding(EngineLifecycle.class)).isNotNull();
            assertThat(dram.getInstance(DeviceMemory.class)).isInstanceOf(HostMemory.class);
        }
    }

    @Test
    void vramSwapsInCudaDeviceMemory() {
        // Backends.compose checks CUDA first, which this machine may lack; build the same modules by hand
        for (TransportKind t : TransportKind.values()) {
            Injector vram = Guice.createInjector(Stage.DEVELOPMENT, com.google.inject.util.Modules.combine(
                    com.google.inject.util.Modules.override(new io.tcpx4j.inject.EngineModule(EngineConfig.defaults("x")))
                            .with(new io.tcpx4j.cuda.CudaUnpackModule(0)),
                    Backends.transportModule(new Backends.Spec(t, MemoryKind.DRAM, "127.0.0.1"))));
            assertThat(vram.getBinding(Key.get(DeviceMemory.class)).getProvider().toString())
                    .contains("CudaUnpackModule.deviceMemory");
            assertThat(vram.getBinding(Key.get(io.tcpx4j.domain.port.out.Unpacker.class)).getProvider().toString())
                    .contains("CudaUnpackModule.unpacker");
        }
    }
}
