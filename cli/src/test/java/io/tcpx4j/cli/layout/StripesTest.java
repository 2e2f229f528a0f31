package io.tcpx4j.cli.layout;

import io.tcpx4j.api.MemoryDescriptor;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The round-robin layout of a row's blocks over one buffer per GPU, and where each buffer's bytes lie in a pattern. */
class StripesTest {

    private static final long K = 4096;
    private final MemoryDescriptor gpu0 = MemoryDescriptor.vram(0x10000000L, 64 * K, 0);
    private final MemoryDescriptor gpu1 = MemoryDescriptor.vram(0x20000000L, 64 * K, 1);
    private final MemoryDescriptor gpu2 = MemoryDescriptor.vram(0x30000000L, 64 * K, 2);

    @Test
    void consecutiveBlocksGoRoundTheGpusEachGpusShareContiguous() {
        Stripes s = new Stripes(List.of(gpu0, gpu1, gpu2));
        for (long b = 0; b < 9; b++) {
            MemoryDescriptor d = s.block(b, K);
            assertThat(d.device()).isEqualTo((int) (b % 3));
            assertThat(d.length()).isEqualTo(K);
            assertThat(d.address()).isEqualTo(s.buffers().get((int) (b % 3)).address() + b / 3 * K);
        }
    }

    @Test
    void oneBufferIsThePlainLayout() {
        Stripes s = Stripes.of(gpu0);
        assertThat(s.block(5, K)).isEqualTo(gpu0.slice(5 * K, K));
        Stripes.Part p = s.part(0, 3, 4, K);
        assertThat(p.region()).isEqualTo(gpu0.slice(3 * K, 4 * K));
        assertThat(p.placement().streamOffset(0)).isZero();
        assertThat(p.placement().streamOffset(4 * K - 1)).isEqualTo(4 * K - 1);
        assertThat(p.placement().runEnd(0)).as("one run").isEqualTo(Long.MAX_VALUE);
        assertThat(Stripes.Placement.PLAIN.streamOffset(12345)).isEqualTo(12345);
    }

    @Test
    void thePartsOfASlotCoverEachOfItsBlocksOnceAtTheirPlaceInThePattern() {
        Stripes s = new Stripes(List.of(gpu0, gpu1, gpu2));
        for (long first : new long[] {0, 1, 5, 7}) {
            for (long count : new long[] {1, 2, 3, 4, 8}) {
                Set<Long> seen = new HashSet<>();
                for (int i = 0; i < s.count(); i++) {
                    Stripes.Part p = s.part(i, first, count, K);
                    assertThat(p.region().device()).isEqualTo(i);
                    for (long x = 0; x < p.region().length(); x += K) {
                        long streamBlock = p.placement().streamOffset(x) / K;
                        long b = first + streamBlock;
                        // the part's bytes at x are block b's, where the layout puts block b
                        assertThat(p.region().address() + x).isEqualTo(s.block(b, K).address());
                        assertThat(p.placement().streamOffset(x + 17)).isEqualTo(streamBlock * K + 17);
                        assertThat(p.placement().runEnd(x)).isEqualTo(x + K);
                        assertThat(seen.add(b)).isTrue();
                    }
                }
                assertThat(seen).as("blocks %d..%d", first, first + count - 1).hasSize((int) count)
                        .allMatch(b -> b >= first && b < first + count);
            }
        }
    }

    @Test
    void aBufferWithoutBlocksInTheRangeHasAnEmptyPart() {
        // one block, slot 3 of a batch of 1, over two buffers sized for 4 blocks: buffer 0 holds none of it
        Stripes s = new Stripes(List.of(gpu0.slice(0, 2 * K), gpu1.slice(0, 2 * K)));
        assertThat(s.part(0, 3, 1, K).region().length()).isZero();
        assertThat(s.part(1, 3, 1, K).region()).isEqualTo(gpu1.slice(K, K));
        assertThat(new Stripes(List.of(gpu0.slice(0, K), gpu1.slice(0, K), gpu2.slice(0, K))).part(2, 0, 1, K)
                .region().length()).isZero();
    }

    @Test
    void buffersHoldTheirShareOfTheLargestRow() {
        assertThat(Stripes.bytesPerBuffer(3, K, 2)).isEqualTo(2 * K);
        assertThat(Stripes.bytesPerBuffer(4, K, 2)).isEqualTo(2 * K);
        assertThat(Stripes.bytesPerBuffer(5, K, 1)).isEqualTo(5 * K);
        Stripes s = new Stripes(List.of(gpu0.slice(0, 2 * K), gpu1.slice(0, K)));
        assertThat(s.holds(3, K)).as("blocks 0 and 2 on GPU 0, block 1 on GPU 1").isTrue();
        assertThat(s.holds(4, K)).as("block 3 is a second one on GPU 1").isFalse();
        assertThatThrownBy(() -> new Stripes(List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
