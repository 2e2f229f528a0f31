package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.CountingTransportDouble;
import io.tcpx4j.domain.EnginePair;
import io.tcpx4j.domain.HostAsVramDouble;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.protocol.RegionMetadata;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;
import io.tcpx4j.domain.transfer.Packing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Small descriptors of one post travel packed in shared chunks: far fewer transport requests, every
 * byte in its place (sources and destinations back to back or in reverse order, guard bands),
 * notification after the last byte;
 * both ends derive the same packing, the initiator of a READ caps it, and a target refuses packed
 * chunks into memory it cannot scatter into without losing step.
 */
class CoalescedTransferTest {

    private static final int KIB = 1024;
    private static final int CHUNK = 512 * KIB;
    private static final byte POISON = (byte) 0x5A;

    private EnginePair pair;

    private EnginePair pair(int limitA, int limitB) {
        return pair(limitA, limitB, new HostMemory());
    }

    private EnginePair pair(int limitA, int limitB, DeviceMemory memoryB) {
        // inline off: these transfers are about the chunk path
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(0).withCoalesceLimit(limitA),
                EngineConfig.defaults("beta").withInlineLimit(0).withCoalesceLimit(limitB),
                CountingTransportDouble::new, memoryB);
        return pair;
    }

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private int requests() {
        return CountingTransportDouble.total(pair);
    }

    /** {@code n} descriptors of {@code size} bytes. */
    static long[] repeat(long size, int n) {
        long[] out = new long[n];
        Arrays.fill(out, size);
        return out;
    }

    @Test
    void kvShapedWritesAndReadsPackSixteenKibDescriptorsEightToAChunk() {
        pair(64 * KIB, 64 * KIB);
        long[] sizes = repeat(16 * KIB, 256);
        pair.transferAndCheck(true, sizes);
        // 4 MiB in packed chunks of 128 KiB: 32 sends and 32 receives instead of 256 each
        assertThat(Packing.HOST_CHUNK).isEqualTo(128 * KIB);
        assertThat(requests()).as("requests of the WRITE").isEqualTo(2 * 32);
        pair.transferAndCheck(false, sizes);
        assertThat(requests()).as("requests of the WRITE and the READ").isEqualTo(4 * 32);
    }

    @Test
    void everyLayoutOfSourcesAndDestinationsLandsTheSameBytesThroughTheSameChunks() {
        pair(64 * KIB, 64 * KIB);
        long[] sizes = {16 * KIB, 0, 3, 16 * KIB, 40 * KIB, 1, 64 * KIB, 5000, 16 * KIB, 700 * KIB, 8 * KIB, 9 * KIB};
        long chunks = ChunkPlan.countChunks(sizes, CHUNK, Packing.of(MemoryKind.DRAM, 64 * KIB, CHUNK));
        long merged = (Arrays.stream(sizes).sum() + CHUNK - 1) / CHUNK;
        int expected = 0;
        for (boolean write : new boolean[] {true, false}) {
            for (boolean sourcesApart : new boolean[] {false, true}) {
                for (boolean destinationsApart : new boolean[] {false, true}) {
                    // back to back: sent or received in place; apart: through staging buffers; back to back
                    // on both sides: one descriptor (ContiguousDescriptorsTest)
                    pair.transferAndCheck(write, sizes, sourcesApart, destinationsApart);
                    expected += 2 * (sourcesApart || destinationsApart ? chunks : merged);
                    assertThat(requests()).as("write %s, sources apart %s, destinations apart %s",
                            write, sourcesApart, destinationsApart).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void mixedSizesKeepLargeDescriptorsOnTheirOwnChunksAndPackTheRest() {
        pair(64 * KIB, 64 * KIB);
        long[] sizes = {16 * KIB, 16 * KIB, 1024 * KIB + 5, 4 * KIB, 0, 4 * KIB, 64 * KIB + 1, 1, 64 * KIB, 7, 3 * KIB};
        long expected = ChunkPlan.countChunks(sizes, CHUNK, Packing.of(MemoryKind.DRAM, 64 * KIB, CHUNK));
        // [16K 16K] [1M+5 → 3 chunks] [4K 0 4K] [64K+1] [1 64K 7 3K]
        assertThat(expected).isEqualTo(1 + 3 + 1 + 1 + 1);
        pair.transferAndCheck(true, sizes);
        assertThat(requests()).isEqualTo(2 * expected);
        pair.transferAndCheck(false, sizes);
        assertThat(requests()).isEqualTo(4 * expected);
    }

    @Test
    void aLimitOfZeroSendsEveryDescriptorOnItsOwnChunk() {
        pair(0, 0);
        pair.transferAndCheck(true, repeat(16 * KIB, 64));
        pair.transferAndCheck(false, repeat(16 * KIB, 64));
        assertThat(requests()).isEqualTo(4 * 64);
    }

    @Test
    void aReadIsPackedOnlyUpToWhatItsInitiatorTakes() {
        pair(0, 64 * KIB);
        pair.transferAndCheck(false, repeat(16 * KIB, 64));
        assertThat(requests()).as("initiator takes no packing").isEqualTo(2 * 64);
        close();
        pair(4 * KIB, 64 * KIB);
        pair.transferAndCheck(false, repeat(4 * KIB, 64));
        assertThat(requests()).as("4 KiB descriptors within the initiator's limit: two packed chunks").isEqualTo(2 * 2);
        close();
        pair(64 * KIB, 0);
        pair.transferAndCheck(false, repeat(16 * KIB, 64));
        assertThat(requests()).as("target does not pack").isEqualTo(2 * 64);
    }

    @Test
    void packingStopsAtTheChunkSizeAndAtTheLimit() {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(0).withChunkSize(64 * KIB),
                EngineConfig.defaults("beta").withInlineLimit(0), CountingTransportDouble::new);
        // 64 KiB chunks: four 16 KiB descriptors each; the limit (64 KiB) is capped by the chunk size
        pair.transferAndCheck(true, repeat(16 * KIB, 20));
        assertThat(requests()).isEqualTo(2 * 5);
    }

    @ParameterizedTest(name = "{0}, devmem receives {1}")
    @CsvSource({"VRAM, true", "VRAM, false", "DRAM, true", "DRAM, false"})
    void packedChunksOfEitherKindLandEveryByteThroughTheSameChunks(MemoryKind kind, boolean devmem) {
        HostAsVramDouble.Unpacking unpackA = new HostAsVramDouble.Unpacking();
        HostAsVramDouble.Unpacking unpackB = new HostAsVramDouble.Unpacking();
        // host memory stays host memory; for VRAM, every buffer of the pair is "device memory"
        HostAsVramDouble vramA = new HostAsVramDouble();
        HostAsVramDouble vramB = new HostAsVramDouble();
        DeviceMemory memoryA = kind == MemoryKind.VRAM ? vramA : new HostMemory();
        DeviceMemory memoryB = kind == MemoryKind.VRAM ? vramB : new HostMemory();
        InMemoryNetTransportDouble.Config transport = devmem ? InMemoryNetTransportDouble.Config.defaults()
                : InMemoryNetTransportDouble.Config.defaults().without(Capability.DEVMEM_RECEIVE);
        pair = new EnginePair(limits(EngineConfig.defaults("alpha"), 64 * KIB), limits(EngineConfig.defaults("beta"),
                64 * KIB), CountingTransportDouble::new, transport, memoryA, unpackA, memoryB, unpackB);
        long[] sizes = {16 * KIB, 0, 3, 16 * KIB, 40 * KIB, 1, 64 * KIB, 5000, 16 * KIB, 700 * KIB, 8 * KIB, 9 * KIB,
            16 * KIB, 16 * KIB, 16 * KIB, 16 * KIB, 16 * KIB, 16 * KIB, 16 * KIB, 16 * KIB, 16 * KIB, 16 * KIB};
        // device memory in chunks of up to 512 KiB, host memory of up to 128 KiB
        long chunks = ChunkPlan.countChunks(sizes, CHUNK, Packing.of(kind, 64 * KIB, CHUNK));
        assertThat(chunks).isEqualTo(kind == MemoryKind.VRAM ? 4 : 6);
        int expected = 0;
        for (boolean write : new boolean[] {true, false}) {
            // sources or destinations in place, or both apart (back to back on both sides merges them)
            for (boolean[] apart : new boolean[][] {{false, true}, {true, false}, {true, true}}) {
                pair.transferAndCheck(write, sizes, apart[0], apart[1], kind);
                expected += 2 * chunks;
                assertThat(requests()).as("write %s, sources apart %s, destinations apart %s", write, apart[0],
                        apart[1]).isEqualTo(expected);
            }
        }
        long gathers = unpackA.copies + unpackB.copies;
        long scatters = unpackA.scatters + unpackB.scatters;
        if (kind == MemoryKind.VRAM) {
            // device memory: both gathers and (in place receives) the scatters out of staging are the unpacker's
            assertThat(gathers).as("device copies").isGreaterThan(0);
            assertThat(vramA.deviceAllocations() + vramB.deviceAllocations()).as("device staging").isPositive();
        } else {
            assertThat(gathers).as("host memory is gathered by the CPU").isZero();
        }
        assertThat(scatters > 0).as("scattered from bounce pages by the unpacker").isEqualTo(devmem);
        close();
        pair = null;
        assertThat(vramA.deviceAllocations() + vramB.deviceAllocations()).as("staging freed at close").isZero();
    }

    /** {@code cfg} without inline transfers, with {@code limit} for both kinds of memory. */
    private static EngineConfig limits(EngineConfig cfg, int limit) {
        return cfg.withInlineLimit(0).withCoalesceLimit(limit).withDeviceCoalesceLimit(limit);
    }

    /** A pair whose engines see their memory as {@code kindA} and {@code kindB}, default packing limits. */
    private EnginePair pairOf(MemoryKind kindA, MemoryKind kindB) {
        DeviceMemory memoryA = kindA == MemoryKind.VRAM ? new HostAsVramDouble() : new HostMemory();
        DeviceMemory memoryB = kindB == MemoryKind.VRAM ? new HostAsVramDouble() : new HostMemory();
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(0),
                EngineConfig.defaults("beta").withInlineLimit(0), CountingTransportDouble::new,
                InMemoryNetTransportDouble.Config.defaults(), memoryA, new HostAsVramDouble.Unpacking(), memoryB,
                new HostAsVramDouble.Unpacking());
        return pair;
    }

    @ParameterizedTest(name = "{0} x {1}")
    @CsvSource({"16, 256", "64, 64", "128, 32"})
    void kvBlocksOfDeviceMemoryTravelInFullChunksByDefault(int kib, int blocks) {
        pairOf(MemoryKind.VRAM, MemoryKind.VRAM);
        long[] sizes = repeat(kib * KIB, blocks);
        // 4 MiB scattered on both sides, packed into 512 KiB chunks: 8 sends and 8 receives
        pair.transferAndCheck(true, sizes, true, true, MemoryKind.VRAM);
        assertThat(requests()).as("requests of the WRITE").isEqualTo(2 * 8);
        pair.transferAndCheck(false, sizes, true, true, MemoryKind.VRAM);
        assertThat(requests()).as("requests of the WRITE and the READ").isEqualTo(4 * 8);
    }

    @ParameterizedTest(name = "{0} initiator")
    @CsvSource({"VRAM, DRAM", "DRAM, VRAM"})
    void hostAndDeviceMemoryOnTheTwoSidesPackAsHostMemory(MemoryKind initiator, MemoryKind target) {
        pairOf(initiator, target);
        // 16 KiB descriptors within both limits: 128 KiB chunks, as host memory allows
        pair.transferAndCheck(true, repeat(16 * KIB, 256), true, true, initiator, target);
        assertThat(requests()).as("16 KiB x 256 WRITE").isEqualTo(2 * 32);
        pair.transferAndCheck(false, repeat(16 * KIB, 256), true, true, target, initiator);
        assertThat(requests()).as("and READ").isEqualTo(4 * 32);
        // 64 KiB descriptors: within the device limit, above the host one
        pair.transferAndCheck(true, repeat(64 * KIB, 64), true, true, initiator, target);
        pair.transferAndCheck(false, repeat(64 * KIB, 64), true, true, target, initiator);
        assertThat(requests()).as("64 KiB x 64, each on its own").isEqualTo(4 * 32 + 4 * 64);
    }

    /** Beta's memory double: one host range it calls VRAM (as a GPU build would see device memory). */
    static final class OneRangeOfVramDouble implements DeviceMemory {
        private final HostMemory host = new HostMemory();
        private final MemoryDescriptor vram;

        OneRangeOfVramDouble(long address, long length) {
            this.vram = new MemoryDescriptor(address, length, MemoryKind.VRAM, 0);
        }

        @Override
        public boolean hasDevices() {
            return true;
        }

        @Override
        public MemoryKind kindOf(long address) {
            return vram.contains(address, 1) ? MemoryKind.VRAM : MemoryKind.DRAM;
        }

        @Override
        public MemoryDescriptor allocationRange(long address, long length) {
            return vram.contains(address, length) ? vram : host.allocationRange(address, length);
        }

        @Override
        public MemoryDescriptor allocate(MemoryKind kind, long size, int device) {
            return host.allocate(MemoryKind.DRAM, size, device);
        }

        @Override
        public MemoryDescriptor allocatePinned(long size) {
            return host.allocatePinned(size);
        }

        @Override
        public void free(MemoryDescriptor memory) {
            host.free(memory);
        }

        @Override
        public void copy(MemoryDescriptor destination, MemoryDescriptor source) {
            host.copy(destination, source);
        }

        @Override
        public long copyAsync(MemoryDescriptor destination, MemoryDescriptor source) {
            return host.copyAsync(destination, source);
        }

        @Override
        public boolean isDone(long ticket) {
            return host.isDone(ticket);
        }
    }

    @Test
    void aTargetRefusesPackedChunksIntoDeviceMemoryDrainsThemAndStaysInStep() {
        long size = 256 * KIB;
        long vram = NativeAlloc.of(size);
        try {
            pair(64 * KIB, 64 * KIB, new OneRangeOfVramDouble(vram, size));
            io.tcpx4j.domain.memory.NativeMemory.fill(vram, size, POISON);
            pair.b.register(new MemoryDescriptor(vram, size, MemoryKind.VRAM, 0));
            // alpha is lied to: it believes the range is host memory, so it packs
            pair.a.loadRemoteMetadata("beta", new RegionMetadata("beta", MemoryDescriptor.dram(vram, size)).encode());
            long src = pair.randomBuffer(size);
            pair.a.register(MemoryDescriptor.dram(src, size));
            List<MemoryDescriptor> local = new java.util.ArrayList<>();
            List<MemoryDescriptor> remote = new java.util.ArrayList<>();
            for (long off = 0; off < size; off += 16 * KIB) {
                local.add(MemoryDescriptor.dram(src + off, 16 * KIB));
                remote.add(MemoryDescriptor.dram(vram + off, 16 * KIB));
            }
            Transfer w = pair.a.session("beta").write(local, remote, "x".getBytes());
            assertThat(pair.pump(() -> w.status().isTerminal())).isTrue();
            assertThat(w.error()).get().extracting(TransferException::code)
                    .isEqualTo(TransferException.Code.NOT_SUPPORTED);
            assertThat(EnginePair.read(vram, size)).as("nothing scattered into device memory").containsOnly(POISON);
            assertThat(pair.b.drainNotifications()).as("no notification for a refused WRITE").isEmpty();
            // the drained chunks kept the stream in step: the next transfer lands
            pair.transferAndCheck(true, repeat(16 * KIB, 40));
        } finally {
            close();
            pair = null;
            NativeAlloc.free(vram);
        }
    }

    /** Memory outside the pair (freed after the engines are closed). */
    private static final class NativeAlloc {
        static long of(long size) {
            return io.tcpx4j.domain.memory.NativeMemory.allocate(size, 4096);
        }

        static void free(long address) {
            io.tcpx4j.domain.memory.NativeMemory.free(address);
        }
    }
}
