package io.tcpx4j.cli;

import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PatternsTest {

    private final long a = NativeMemory.allocate(8192, 4096);
    private final long b = NativeMemory.allocate(8192, 4096);

    @AfterEach
    void free() {
        Patterns.beforeVerify = null;
        NativeMemory.free(a);
        NativeMemory.free(b);
    }

    @Test
    void aFilledRangeVerifiesAndACopyOfItToo() {
        Patterns.fill(a, 8191, 42, 0);
        assertThat(Patterns.verify(a, 8191, 42, 0)).isZero();
        NativeMemory.copy(a, b, 8191);
        assertThat(Patterns.verify(b, 8191, 42, 0)).isZero();
    }

    @Test
    void everyDifferingByteIsCounted() {
        Patterns.fill(a, 4096, 7, 0);
        NativeMemory.putByte(a + 3, (byte) (NativeMemory.getByte(a + 3) ^ 1));
        NativeMemory.putByte(a + 4095, (byte) (NativeMemory.getByte(a + 4095) ^ 0x80));
        assertThat(Patterns.verify(a, 4096, 7, 0)).isEqualTo(2);
    }

    @Test
    void anotherSeedOrOffsetDoesNotVerify() {
        Patterns.fill(a, 4096, 7, 0);
        assertThat(Patterns.verify(a, 4096, 8, 0)).isGreaterThan(4000);
        assertThat(Patterns.verify(a, 4096, 7, 8)).isGreaterThan(4000);
    }

    @Test
    void pieceWiseFillsEqualOneFill() {
        Patterns.fill(a, 8192, 9, 0);
        Patterns.fill(b, 1000, 9, 0);
        Patterns.fill(b + 1000, 7192, 9, 1000);
        assertThat(Patterns.verify(b, 8192, 9, 0)).isZero();
        assertThat(Patterns.verify(a + 4096, 4096, 9, 4096)).isZero();
    }

    @Test
    void theTestSeamSeesTheRangeBeforeItIsRead() {
        Patterns.fill(a, 4096, 1, 0);
        Patterns.beforeVerify = (address, length) -> NativeMemory.putByte(address + length - 1,
                (byte) (0x5a ^ NativeMemory.getByte(address + length - 1)));
        assertThat(Patterns.verify(a, 4096, 1, 0)).isEqualTo(1);
    }
}
