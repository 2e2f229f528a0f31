package io.tcpx4j.cuda;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How the host sizes the kernel's units (records per warp), checked without a GPU. */
class UnitSizeTest {

    /** 132 SMs x 16 warps, as on an H100/H200 with the shipped kernel. */
    private static final int RESIDENT = 2112;

    @Test
    void aimsAtAboutEightKibPerWarp() {
        assertThat(UnpackKernel.unitSize(65536, 65536L * 4096, RESIDENT, 8)).as("4 KiB pages").isEqualTo(2);
        assertThat(UnpackKernel.unitSize(262144, 262144L * 1024, RESIDENT, 8)).as("1 KiB fragments").isEqualTo(8);
        assertThat(UnpackKernel.unitSize(131070, 131070L * 2048, RESIDENT, 8)).as("2 KiB mean").isEqualTo(4);
    }

    @Test
    void capsAtTheKernelsLargestUnit() {
        assertThat(UnpackKernel.unitSize(1 << 20, (1L << 20) * 64, RESIDENT, 8)).isEqualTo(8);
        assertThat(UnpackKernel.unitSize(1 << 20, (1L << 20) * 64, RESIDENT, 32)).isEqualTo(32);
    }

    @Test
    void smallBatchesSpreadOverEveryResidentWarp() {
        // 16 receives x 128 pages: 2 pages per warp would use 1024 of the 2112 resident warps.
        assertThat(UnpackKernel.unitSize(2048, 2048L * 4096, RESIDENT, 8)).isEqualTo(1);
        assertThat(UnpackKernel.unitSize(8000, 8000L * 1024, RESIDENT, 8)).isEqualTo(3);
    }

    @Test
    void neverBelowOneRecord() {
        assertThat(UnpackKernel.unitSize(1, 65536, RESIDENT, 8)).isEqualTo(1);
        assertThat(UnpackKernel.unitSize(10, 0, RESIDENT, 8)).isEqualTo(1);
        assertThat(UnpackKernel.unitSize(10, 10L * 65536, 0, 8)).isEqualTo(1);
    }
}
