package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.cli.layout.Stripes;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The check of {@code --check-consistency} on buffers spread over GPUs ({@link HostGpusDouble.Memory}, host
 * memory labelled by GPU): what is written lies where the layout puts each block, every byte of every GPU
 * is checked, a bad byte on any GPU is counted, and the checked bytes are attributed to the GPU the memory
 * reports.
 */
class BenchMemoryTest {

    /** Not a multiple of 8: pattern words do not line up with blocks. */
    private static final long BLOCK = 4100;
    private final HostGpusDouble.Memory gpus = new HostGpusDouble.Memory(2);
    private final BenchMemory memory = new BenchMemory(gpus, MemoryKind.VRAM);

    @AfterEach
    void allFreed() {
        assertThat(gpus.live()).isZero();
    }

    @Test
    void blocksSpreadOverTwoGpusHoldThePlainPatternBlockByBlock() {
        Stripes s = memory.allocate(List.of(1, 0), Stripes.bytesPerBuffer(8, BLOCK, 2));
        try {
            assertThat(s.buffers()).extracting(MemoryDescriptor::device).containsExactly(1, 0);
            for (long first : new long[] {0, 3}) {
                long seed = 42 + first;
                memory.fill(s, first, 5, BLOCK, seed);
                for (long b = first; b < first + 5; b++) {
                    MemoryDescriptor d = s.block(b, BLOCK);
                    assertThat(Patterns.verify(d.address(), BLOCK, seed, (b - first) * BLOCK)).as("block %d", b).isZero();
                }
                Verified v = memory.verify(s, first, 5, BLOCK, seed);
                assertThat(v.mismatches()).isZero();
                // blocks first, first+2, first+4 on the first buffer's GPU, the other two on the second's
                int firstGpu = first % 2 == 0 ? 1 : 0;
                assertThat(v.perGpu()).containsOnly(Map.entry(firstGpu, 3 * BLOCK), Map.entry(1 - firstGpu, 2 * BLOCK));
            }
        } finally {
            memory.free(s);
        }
    }

    @Test
    void aBadByteOnEitherGpuIsCounted() {
        Stripes s = memory.allocate(List.of(0, 1), Stripes.bytesPerBuffer(4, BLOCK, 2));
        try {
            for (int gpu = 0; gpu < 2; gpu++) {
                memory.fill(s, 0, 4, BLOCK, 7);
                long last = s.buffers().get(gpu).address() + 2 * BLOCK - 1; // the last byte of its second block
                NativeMemory.putByte(last, (byte) ~NativeMemory.getByte(last));
                assertThat(memory.verify(s, 0, 4, BLOCK, 7).mismatches()).as("GPU %d", gpu).isEqualTo(1);
            }
        } finally {
            memory.free(s);
        }
    }

    @Test
    void hostMemoryIsOneBufferInThePlainLayoutCheckedOnNoGpu() {
        BenchMemory host = new BenchMemory(gpus, MemoryKind.DRAM);
        Stripes s = host.allocate(List.of(), 4 * BLOCK);
        try {
            assertThat(s.count()).isEqualTo(1);
            host.fill(s, 0, 4, BLOCK, 9);
            assertThat(Patterns.verify(s.buffers().get(0).address(), 4 * BLOCK, 9, 0)).isZero();
            Verified v = host.verify(s, 0, 4, BLOCK, 9);
            assertThat(v.mismatches()).isZero();
            assertThat(v.perGpu()).isEmpty();
        } finally {
            host.free(s);
        }
    }
}
