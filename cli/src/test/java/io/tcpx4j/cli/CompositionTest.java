package io.tcpx4j.cli;

import com.google.inject.Binding;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Key;
import com.google.inject.Stage;
import com.google.inject.TypeLiteral;
import com.google.inject.multibindings.MapBinderBinding;
import com.google.inject.multibindings.MultibinderBinding;
import com.google.inject.multibindings.MultibindingsTargetVisitor;
import com.google.inject.multibindings.OptionalBinderBinding;
import com.google.inject.spi.DefaultBindingTargetVisitor;
import com.google.inject.util.Modules;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.cuda.CudaUnpackModule;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.inject.EngineLifecycle;
import io.tcpx4j.inject.EngineModule;
import io.tcpx4j.transport.tcpx.TcpxOptions;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** The injectors the CLI builds are valid Guice compositions (checked without provisioning). */
class CompositionTest {

    private static com.google.inject.Module vram(TransportKind t) {
        // Backends.compose checks CUDA first, which this machine may lack; the same modules by hand
        return Modules.combine(new EngineModule(EngineConfig.defaults("x")),
                Backends.transportModule(new Backends.Spec(t, MemoryKind.DRAM, "127.0.0.1")), new CudaUnpackModule(0));
    }

    /** The binding an OptionalBinder resolves to, as text. */
    private static <T> String actual(Injector injector, Class<T> type) {
        @SuppressWarnings("unchecked")
        TypeLiteral<Optional<T>> optional = (TypeLiteral<Optional<T>>) TypeLiteral.get(
                com.google.inject.util.Types.newParameterizedType(Optional.class, type));
        Binding<Optional<T>> b = injector.getBinding(Key.get(optional));
        return b.acceptTargetVisitor(new Visitor<>());
    }

    private static final class Visitor<T> extends DefaultBindingTargetVisitor<T, String>
            implements MultibindingsTargetVisitor<T, String> {
        @Override
        public String visit(OptionalBinderBinding<? extends T> optional) {
            return String.valueOf(optional.getActualBinding() != null ? optional.getActualBinding() : optional.getDefaultBinding());
        }

        @Override
        public String visit(MultibinderBinding<? extends T> multibinding) {
            return "multibinder";
        }

        @Override
        public String visit(MapBinderBinding<? extends T> mapbinding) {
            return "mapbinder";
        }
    }

    @Test
    void everyTransportComposesWithTheEngineModuleOnHostMemory() {
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
    void withMetricsEveryTransportIsWrappedInTheMeteredDecorator() {
        CliMetrics metrics = new CliMetrics("127.0.0.1", 0);
        for (TransportKind t : TransportKind.values()) {
            Backends.Spec spec = new Backends.Spec(t, MemoryKind.DRAM, "127.0.0.1", metrics);
            Injector dram = Guice.createInjector(Stage.DEVELOPMENT, Backends.compose(EngineConfig.defaults("x"), spec));
            assertThat(dram.getBinding(EngineLifecycle.class)).isNotNull();
            // the binding is the metrics override's provider, not the transport module's
            assertThat(dram.getBinding(NetTransport.class).getSource().toString()).contains("Backends");
            // and with cuda-unpack the transport still gets the CUDA device memory
            Injector vram = Guice.createInjector(Stage.DEVELOPMENT, new EngineModule(EngineConfig.defaults("x")),
                    Backends.transportModule(spec), new CudaUnpackModule(0));
            assertThat(actual(vram, DeviceMemory.class)).contains("CudaDeviceMemory");
        }
        // over loopback it can be provisioned here: the decorator around the module's transport
        Injector loopback = Guice.createInjector(Backends.compose(EngineConfig.defaults("x"),
                new Backends.Spec(TransportKind.LOOPBACK, MemoryKind.DRAM, "127.0.0.1", metrics)));
        NetTransport transport = loopback.getInstance(NetTransport.class);
        try {
            assertThat(transport).isInstanceOf(io.tcpx4j.metrics.MeteredNetTransport.class);
            assertThat(transport.name()).isEqualTo("loopback");
            assertThat(loopback.getInstance(NetTransport.class)).isSameAs(transport);
        } finally {
            transport.close();
        }
    }

    @Test
    void vramGivesCudaMemoryToTheEngineAndTheTransportAlike() {
        for (TransportKind t : TransportKind.values()) {
            Injector vram = Guice.createInjector(Stage.DEVELOPMENT, vram(t));
            assertThat(actual(vram, DeviceMemory.class)).contains("CudaDeviceMemory").doesNotContain("HostMemory");
            assertThat(actual(vram, ScatterGather.class)).contains("CudaScatterGather").doesNotContain("CpuScatterGather");
            assertThat(vram.getBinding(DeviceMemory.class).toString()).doesNotContain("HostMemory");
        }
    }

    @Test
    void cudaUnpackModuleComposesWithEngineModule() {
        Injector i = Guice.createInjector(Stage.DEVELOPMENT, new EngineModule(EngineConfig.defaults("x")),
                Backends.transportModule(new Backends.Spec(TransportKind.LOOPBACK, MemoryKind.DRAM, "127.0.0.1")),
                new CudaUnpackModule(0));
        assertThat(actual(i, DeviceMemory.class)).contains("CudaDeviceMemory");
        assertThat(actual(i, ScatterGather.class)).contains("CudaScatterGather");
    }

    @Test
    void overTcpxThePluginsChunkSizeIsTheEnginesChunkSize() {
        Injector i = Guice.createInjector(Stage.DEVELOPMENT, Backends.compose(EngineConfig.defaults("x")
                .withChunkSize(1 << 20), new Backends.Spec(TransportKind.TCPX, MemoryKind.DRAM, "127.0.0.1")));
        assertThat(i.getInstance(TcpxOptions.class).dynamicChunkSize()).isEqualTo(1 << 20);
    }
}
