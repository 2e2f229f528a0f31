package io.tcpx4j.api;

import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HostBufferTest {

    @Test
    void isPageAlignedZeroedDramThatPutAndGetReachByAddress() {
        try (HostBuffer b = HostBuffer.allocate(10_000)) {
            MemoryDescriptor d = b.descriptor();
            assertThat(d.kind()).isEqualTo(MemoryKind.DRAM);
            assertThat(d.length()).isEqualTo(10_000).isEqualTo(b.length());
            assertThat(d.address() % HostBuffer.ALIGNMENT).isZero();
            assertThat(NativeMemory.getByte(d.address() + 9_999)).isZero();
            b.put(9_997, new byte[] {1, 2, 3});
            assertThat(NativeMemory.getByte(d.address() + 9_998)).isEqualTo((byte) 2);
            NativeMemory.putByte(d.address() + 5, (byte) 42);
            byte[] got = new byte[4];
            b.get(4, got, 1, 2);
            assertThat(got).containsExactly(0, 0, 42, 0);
        }
    }

    @Test
    void rangesOutsideTheBufferAndUseAfterCloseAreRefused() {
        HostBuffer b = HostBuffer.allocate(4096);
        assertThatThrownBy(() -> b.put(4095, new byte[2])).isInstanceOf(TransferException.class)
                .hasMessageContaining("outside a buffer of 4096 bytes");
        assertThatThrownBy(() -> b.get(-1, new byte[1])).isInstanceOf(TransferException.class);
        assertThatThrownBy(() -> b.put(0, new byte[4], 3, 2)).isInstanceOf(IndexOutOfBoundsException.class);
        b.close();
        b.close();
        assertThatThrownBy(() -> b.get(0, new byte[1])).isInstanceOf(IllegalStateException.class);
        assertThat(b.toString()).endsWith("closed]");
        assertThatThrownBy(() -> HostBuffer.allocate(0)).isInstanceOf(TransferException.class)
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
    }
}
