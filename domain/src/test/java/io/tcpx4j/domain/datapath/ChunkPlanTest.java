package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.transfer.Packing;

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
        assertThat(p.posted()).isEqualTo(5);
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

    @Test
    void packedRunsTakeConsecutiveSmallDescriptorsUpToTheChunkSize() {
        int kib = 1024;
        long[] len = {16 * kib, 16 * kib, 0, 16 * kib, 100 * kib, 8 * kib, 600 * kib, 4 * kib};
        long[] addr = new long[len.length];
        for (int i = 0; i < addr.length; i++) {
            addr[i] = 1_000_000L * (i + 1);
        }
        ChunkPlan p = new ChunkPlan(1, addr, len, null, 600 * kib, new Packing(16 * kib, 32 * kib), false);
        List<long[]> chunks = new ArrayList<>();
        while (p.hasNext()) {
            chunks.add(new long[] {p.nextDesc(), p.nextLength(), p.nextPacked() ? p.nextRunEnd() : -1});
            p.advance();
        }
        // limit 16 KiB, packed chunks of 32 KiB, 600 KiB chunks: [16K 16K 0] packed, 16K alone, 100K in one
        // chunk, 8K alone (600K follows), 600K in one chunk, 4K alone
        assertThat(chunks).extracting(c -> c[0]).containsExactly(0L, 3L, 4L, 5L, 6L, 7L);
        assertThat(chunks.get(0)).containsExactly(0, 32 * kib, 3);
        assertThat(chunks.get(1)).containsExactly(3, 16 * kib, -1);
        assertThat(chunks.get(3)).containsExactly(5, 8 * kib, -1);
        assertThat(chunks).hasSize((int) p.chunks).hasSize(6);
    }

    @Test
    void aRunAbsorbsEmptyDescriptorsAndStopsAtTheFirstLargeOne() {
        long[] len = {10, 0, 20, 0, 30, 5000, 1, 1};
        ChunkPlan p = new ChunkPlan(1, new long[len.length], len, null, 4096, new Packing(100, 4096), false);
        assertThat(p.nextPacked()).isTrue();
        assertThat(p.nextRunEnd()).isEqualTo(5);
        assertThat(p.nextLength()).isEqualTo(60);
        p.advance();
        assertThat(p.nextDesc()).isEqualTo(5);
        assertThat(p.nextPacked()).isFalse();
        p.advance();
        p.advance();
        assertThat(p.nextDesc()).isEqualTo(6);
        assertThat(p.nextPacked()).isTrue();
        assertThat(p.nextLength()).isEqualTo(2);
        p.advance();
        assertThat(p.hasNext()).isFalse();
        assertThat(p.posted()).isEqualTo(p.chunks).isEqualTo(4);
    }

    @Test
    void randomPlansCoverEveryByteOnceInOrderAndCountTheChunksTheyWalk() {
        java.util.Random rnd = new java.util.Random(7);
        for (int round = 0; round < 2000; round++) {
            int n = 1 + rnd.nextInt(40);
            int chunk = 1 + rnd.nextInt(64 * 1024);
            int packedChunk = 1 + rnd.nextInt(chunk);
            int pack = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(packedChunk + 1);
            Packing packing = pack == 0 ? Packing.NONE : new Packing(pack, packedChunk);
            long[] len = new long[n];
            long[] addr = new long[n];
            long at = 0;
            for (int i = 0; i < n; i++) {
                len[i] = switch (rnd.nextInt(4)) {
                    case 0 -> 0;
                    case 1 -> rnd.nextInt(Math.max(1, pack + 1));
                    case 2 -> rnd.nextInt(3 * chunk);
                    default -> rnd.nextInt(2048);
                };
                addr[i] = at;
                at += len[i];
            }
            ChunkPlan p = new ChunkPlan(1, addr, len, null, chunk, packing, false);
            long next = 0;
            long walked = 0;
            while (p.hasNext()) {
                assertThat(p.nextAddress()).isEqualTo(next);
                assertThat(p.nextLength()).isBetween(1, chunk);
                if (p.nextPacked()) {
                    long sum = 0;
                    int members = 0;
                    for (int i = p.nextDesc(); i < p.nextRunEnd(); i++) {
                        assertThat(len[i]).isLessThanOrEqualTo(pack);
                        sum += len[i];
                        members += len[i] > 0 ? 1 : 0;
                    }
                    assertThat(sum).isEqualTo(p.nextLength()).isLessThanOrEqualTo(packedChunk);
                    assertThat(members).isGreaterThanOrEqualTo(2);
                }
                next += p.nextLength();
                walked++;
                p.advance();
            }
            assertThat(next).isEqualTo(at);
            assertThat(walked).isEqualTo(p.chunks).isEqualTo(ChunkPlan.countChunks(len, chunk, packing));
        }
    }

    @Test
    void aTransferThatLoadsOneChannelMoreIsCutIntoEqualRoundsOverTheChannels() {
        int k = 1024;
        Packing none = Packing.NONE;
        assertThat(ChunkPlan.spreadChunk(new long[] {256 * k}, CHUNK, none, 2)).as("lone 256 KiB").isEqualTo(128 * k);
        assertThat(ChunkPlan.spreadChunk(new long[] {600 * k}, CHUNK, none, 2)).as("512 + 88 balanced").isEqualTo(300 * k);
        assertThat(ChunkPlan.spreadChunk(new long[] {1024 * k}, CHUNK, none, 4)).as("4 channels").isEqualTo(256 * k);
        assertThat(ChunkPlan.spreadChunk(new long[] {300 * k + 1}, CHUNK, none, 2)).as("4 KiB multiple")
                .isEqualTo(152 * k);
        assertThat(ChunkPlan.spreadChunk(new long[] {1536 * k}, CHUNK, none, 2)).as("three chunks: two per channel")
                .isEqualTo(384 * k);
        assertThat(ChunkPlan.spreadChunk(new long[] {512 * k, 256 * k, 256 * k}, CHUNK, none, 2))
                .as("512 + 256 on one channel, 256 on the other").isEqualTo(256 * k);
        assertThat(ChunkPlan.spreadChunk(new long[] {2560 * k}, CHUNK, none, 2)).as("five chunks: six of 428 KiB")
                .isEqualTo(428 * k);
        assertThat(ChunkPlan.spreadChunk(new long[] {768 * k, 768 * k, 768 * k}, CHUNK, none, 2))
                .as("512 + 256 three times: every 512 on one channel").isEqualTo(384 * k);
        long[] nine = {4608 * k};
        int nineChunk = ChunkPlan.spreadChunk(nine, CHUNK, none, 2);
        assertThat(nineChunk).as("nine chunks: ten of 464 KiB").isEqualTo(464 * k);
        assertThat(ChunkPlan.countChunks(nine, nineChunk, none)).isEqualTo(10);
        // 96 KiB descriptors of device memory: one packed chunk of 384 KiB, or two of 192 KiB side by side
        Packing device = Packing.of(MemoryKind.VRAM, 128 * k, CHUNK);
        long[] four = {96 * k, 96 * k, 96 * k, 96 * k};
        int spread = ChunkPlan.spreadChunk(four, CHUNK, device, 2);
        assertThat(spread).isEqualTo(192 * k);
        assertThat(ChunkPlan.countChunks(four, spread, device.cappedAt(spread))).isEqualTo(2);
        assertThat(device.cappedAt(spread).isValid(spread)).isTrue();
    }

    @Test
    void aTransferIsNotSpreadWhereThatWouldCostChunksOrChangeNothing() {
        int k = 1024;
        Packing none = Packing.NONE;
        assertThat(ChunkPlan.spreadChunk(new long[] {1024 * k}, CHUNK, none, 2)).as("already one per channel")
                .isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {2048 * k}, CHUNK, none, 2)).as("two per channel already")
                .isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {256 * k, 256 * k, 256 * k}, CHUNK, none, 2))
                .as("192 KiB chunks would take six").isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {64 * 1024 * k}, CHUNK, none, 2)).as("whole rounds already")
                .isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {64 * 1024 * k + 512 * k}, CHUNK, none, 2))
                .as("129 chunks: a 130th share rounds up to a whole chunk").isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {1024 * k, 1024 * k, 512 * k}, CHUNK, none, 2))
                .as("428 KiB chunks would take eight, not six").isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {300 * k, 200 * k}, CHUNK, none, 2))
                .as("250 KiB chunks would take three").isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {ChunkPlan.SPREAD_FLOOR}, CHUNK, none, 2)).as("the floor")
                .isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {4 * k, 4 * k}, CHUNK, Packing.of(MemoryKind.DRAM,
                32 * k, CHUNK), 2)).as("one small packed chunk").isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {256 * k}, CHUNK, none, 1)).as("one channel").isEqualTo(CHUNK);
        assertThat(ChunkPlan.spreadChunk(new long[] {256 * k}, 64 * k, none, 2)).as("chunks below the floor")
                .isEqualTo(64 * k);
        assertThat(ChunkPlan.spreadChunk(new long[0], CHUNK, none, 2)).as("nothing").isEqualTo(CHUNK);
    }
}
