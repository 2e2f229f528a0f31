package io.tcpx4j.cuda;

import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.ProvisionException;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.ScatterGather;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class CudaUnpackModuleTest {

    @Test
    void bindsTheSpiWithoutTouchingCuda() {
        Injector injector = Guice.createInjector(new CudaUnpackModule(0));
        assertThat(injector.getBinding(DeviceMemory.class)).isNotNull();
        assertThat(injector.getBinding(ScatterGather.class)).isNotNull();
        assertThat(injector.getBinding(CudaDeviceMemory.class)).isNotNull();
    }

    @Test
    void provisioningWithoutAGpuSaysWhy() {
        assumeFalse(Cuda.isAvailable(), "this machine has a GPU");
        Injector injector = Guice.createInjector(new CudaUnpackModule());
        assertThatThrownBy(() -> injector.getInstance(DeviceMemory.class)).isInstanceOf(ProvisionException.class)
                .cause().isInstanceOf(TransferException.class).hasMessageContaining("NOT_SUPPORTED");
        assertThatThrownBy(() -> injector.getInstance(ScatterGather.class)).isInstanceOf(ProvisionException.class)
                .cause().isInstanceOf(TransferException.class).hasMessageContaining("NOT_SUPPORTED");
    }

    @Test
    @GpuTest
    void providesOneMemoryAndAWorkingUnpackerOnAGpu() {
        Injector injector = Guice.createInjector(new CudaUnpackModule(0));
        CudaDeviceMemory memory = injector.getInstance(CudaDeviceMemory.class);
        try {
            assertThat(injector.getInstance(DeviceMemory.class)).isSameAs(memory);
            ScatterGather unpacker = injector.getInstance(ScatterGather.class);
            assertThat(unpacker).isInstanceOf(CudaScatterGather.class).isSameAs(injector.getInstance(ScatterGather.class));
            assertThat(unpacker.submit()).as("empty batch").isZero();
            unpacker.close();
        } finally {
            memory.close();
        }
    }

    @Test
    void rejectsNegativeOrdinals() {
        assertThatThrownBy(() -> new CudaUnpackModule(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
