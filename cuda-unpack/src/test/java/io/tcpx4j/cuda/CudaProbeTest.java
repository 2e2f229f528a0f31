package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The probe's answers agree with each other on any machine, with or without a GPU. */
class CudaProbeTest {

    @Test
    void availabilityAndCauseAgree() {
        if (Cuda.isAvailable()) {
            assertThat(Cuda.unavailabilityCause()).isNull();
            assertThat(Cuda.deviceCount()).isPositive();
            assertThat(Cuda.driverVersion()).isGreaterThanOrEqualTo(12000);
            assertThatCode(Cuda::ensureAvailable).doesNotThrowAnyException();
        } else {
            assertThat(Cuda.unavailabilityCause()).isNotNull();
            assertThat(Cuda.deviceCount()).isZero();
            assertThatThrownBy(Cuda::ensureAvailable).isInstanceOf(TransferException.class)
                    .hasMessageContaining("libcuda.so.1")
                    .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.NOT_SUPPORTED);
        }
    }

    @Test
    void deviceMemoryRefusesToStartWithoutCuda() {
        if (!Cuda.isAvailable()) {
            assertThatThrownBy(CudaDeviceMemory::new).isInstanceOf(TransferException.class)
                    .hasCause(Cuda.unavailabilityCause());
        }
    }
}
