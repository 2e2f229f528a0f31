package io.tcpx4j.domain;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ChunkPlanTest {

    private static final int CHUNK = 512 * 1024;

    /** Walks a plan and returns (address, length) of every chunk in order. */
    private static List<long[]> walk(ChunkPlan p) {
        List<long[]> out = new ArrayList<>();
        while (p.hasNext()) {
            out.add(new long[] {p.nextAddress(), p.nextLength(), p.nextDesc()});
            p.advance();
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 4095, 4096, 4097, CHUNK - 1, CHUNK, CHUNK + 1, 4L * 1024 * 1024 + 1, 3L * CHUNK})
    void oneDescriptorIsCoveredExactlyOnceInOrder(long size) {
        ChunkPlan p = new ChunkPlan(1, new long[] {1000}, new long[] {size}, null, CHUNK);
        List<long[]> chunks = walk(p);
        assertThat(p.chunks).isEqualTo(chunks.size()).isEqualTo((size + CHUNK - 1) / CHUNK);
        long next = 1000;
        for (long[] c : chunks) {
            assertThat(c[0]).isEqualTo(next);
            assertThat(c[1]).isBetween(1L, (long) CHUNK);
            next += c[1];
        }
        assertThat(next - 1000).isEqualTo(size);
        if (!chunks.isEmpty()) {
            // every chunk but the last is full
            for (int i = 0; i < chunks.size() - 1; i++) {
                assertThat(chunks.get(i)[1]).isEqualTo(CHUNK);
            }
        }
    }

    @Test
    void severalDescriptorsKeepTheirOrderAndSkipEmptyOnes() {
        long[] addr = {100, 5000, 90_000, 1_000_000};
        long[] len = {CHUNK + 1, 0, 1, 2L * CHUNK};
        ChunkPlan p = new ChunkPlan(7, addr, len, null, CHUNK);
        List<long[]> chunks = walk(p);
        assertThat(chunks).extracting(c -> c[2]).containsExactly(0L, 0L, 2L, 3L, 3L);
        assertThat(chunks).extracting(c -> c[0]).containsExactly(100L, 100L + CHUNK, 90_000L, 1_000_000L, 1_000_000L + CHUNK);
        assertThat(chunks).extracting(c -> c[1]).containsExactly((long) CHUNK, 1L, 1L, (long) CHUNK, (long) CHUNK);
        assertThat(p.chunks).isEqualTo(5);
        assertThat(p.posted).isEqualTo(5);
    }

    @Test
    void theHardCapOfFourMebibytesSplitsFourMebibytesPlusOneIntoTwo() {
        int cap = EngineConfig.MAX_CHUNK;
        ChunkPlan p = new ChunkPlan(1, new long[] {0}, new long[] {cap + 1L}, null, cap);
        assertThat(walk(p)).extracting(c -> c[1]).containsExactly((long) cap, 1L);
    }

    @Test
    void allZeroLengthDescriptorsMakeNoChunks() {
        ChunkPlan p = new ChunkPlan(1, new long[] {1, 2}, new long[] {0, 0}, null, CHUNK);
        assertThat(p.hasNext()).isFalse();
        assertThat(p.chunks).isZero();
        assertThat(p.allCompleted()).isTrue();
    }
}
