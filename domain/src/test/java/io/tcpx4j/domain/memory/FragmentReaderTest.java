package io.tcpx4j.domain.memory;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.NetRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every bound of the fragment-table check, at and just past its edge, and the unsigned arithmetic. */
class FragmentReaderTest {

    private static final long BOUNCE = 0x7000_0000_0000L;
    private final List<Long> tables = new ArrayList<>();

    @AfterEach
    void free() {
        tables.forEach(NativeMemory::free);
    }

    /** A completed receive of {@code size} bytes over a bounce area of {@code bounceBytes}. */
    private record Table(int size, int fragmentCount, long fragmentsAddress, long bounceBytes) implements NetRequest {
        @Override
        public long bounceBase() {
            return BOUNCE;
        }

        @Override
        public MemoryKind bounceKind() {
            return MemoryKind.DRAM;
        }
    }

    /** Fragments as {srcOff, len, dstOff}; srcOff and len are written as u32 (their low 32 bits). */
    private Table table(int size, long bounceBytes, long[]... fragments) {
        long at = NativeMemory.allocate(Math.max(1, fragments.length) * (long) NetRequest.FRAGMENT_BYTES, 16);
        tables.add(at);
        for (int i = 0; i < fragments.length; i++) {
            long rec = at + (long) i * NetRequest.FRAGMENT_BYTES;
            NativeMemory.putInt(rec, (int) fragments[i][0]);
            NativeMemory.putInt(rec + 4, (int) fragments[i][1]);
            NativeMemory.putLong(rec + 8, fragments[i][2]);
        }
        return new Table(size, fragments.length, at, bounceBytes);
    }

    private static List<long[]> readAll(NetRequest request) {
        FragmentReader reader = new FragmentReader();
        reader.reset(request);
        List<long[]> out = new ArrayList<>();
        while (reader.next()) {
            out.add(new long[] {reader.index(), reader.source(), reader.length(), reader.destinationOffset()});
        }
        return out;
    }

    private static void assertRejected(NetRequest request, String message) {
        assertThatThrownBy(() -> readAll(request)).isInstanceOf(TransferException.class)
                .hasMessageContaining(message)
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.BACKEND);
    }

    @Test
    void readsFragmentsInOrderWithAbsoluteSources() {
        List<long[]> got = readAll(table(100, 8192, new long[] {4096, 60, 40}, new long[] {0, 40, 0}));
        assertThat(got).hasSize(2);
        assertThat(got.get(0)).containsExactly(0, BOUNCE + 4096, 60, 40);
        assertThat(got.get(1)).containsExactly(1, BOUNCE, 40, 0);
    }

    @Test
    void aPackedReceiveIsReadInPiecesThatEachStayInsideOneDescriptor() {
        // descriptors 1..4 of the arrays (lengths 30, 0, 50, 20) back to back: offsets [0,30) [30,80) [80,100)
        long[] addresses = {1, 1000, 7, 2000, 3000, 9};
        long[] lengths = {5, 30, 0, 50, 20, 5};
        // out of order, one fragment spanning all three descriptors, one ending on a boundary
        NetRequest r = table(100, 8192, new long[] {4096, 20, 80}, new long[] {0, 80, 0});
        FragmentReader reader = new FragmentReader();
        assertThat(reader.reset(r, addresses, lengths, 1, 5)).isEqualTo(2);
        List<long[]> got = new ArrayList<>();
        for (int pass = 0; pass < 2; pass++) {
            got.clear();
            while (reader.next()) {
                got.add(new long[] {reader.index(), reader.source(), reader.length(), reader.destination()});
            }
            reader.rewind();
        }
        assertThat(got).hasSize(3);
        assertThat(got.get(0)).containsExactly(0, BOUNCE + 4096, 20, 3000);
        assertThat(got.get(1)).containsExactly(1, BOUNCE, 30, 1000);
        assertThat(got.get(2)).containsExactly(1, BOUNCE + 30, 50, 2000);
        // the same reader back in plain mode: absolute destinations from the base given
        reader.reset(r, 500);
        assertThat(reader.next()).isTrue();
        assertThat(reader.destination()).isEqualTo(580);
    }

    @Test
    void aPieceBeyondThePackedDescriptorsIsRejected() {
        // a receive of 100 bytes whose descriptors cover only 60
        NetRequest r = table(100, 8192, new long[] {0, 100, 0});
        FragmentReader reader = new FragmentReader();
        reader.reset(r, new long[] {1000, 2000}, new long[] {40, 20}, 0, 2);
        assertThat(reader.next()).isTrue();
        assertThat(reader.next()).isTrue();
        assertThatThrownBy(reader::next).isInstanceOf(TransferException.class)
                .hasMessageContaining("past the packed descriptors");
    }

    @Test
    void anEmptyTableReadsNothing() {
        FragmentReader reader = new FragmentReader();
        assertThat(reader.reset(new Table(100, 0, 0, 0))).isZero();
        assertThat(reader.next()).isFalse();
        assertThat(reader.next()).as("still nothing").isFalse();
    }

    @Test
    void fragmentCountWithinTcpxLimit() {
        FragmentReader reader = new FragmentReader();
        assertThat(reader.reset(new Table(100, NetRequest.MAX_FRAGMENTS, 0, 0))).isEqualTo(NetRequest.MAX_FRAGMENTS);
        assertThatThrownBy(() -> reader.reset(new Table(100, NetRequest.MAX_FRAGMENTS + 1, 0, 0)))
                .isInstanceOf(TransferException.class).hasMessageContaining("2049");
        assertThatThrownBy(() -> reader.reset(new Table(100, -1, 0, 0)))
                .isInstanceOf(TransferException.class).hasMessageContaining("-1");
    }

    @Test
    void destinationMustLieInsideTheReceive() {
        assertThat(readAll(table(100, 4096, new long[] {0, 10, 90}))).hasSize(1);
        assertThat(readAll(table(100, 4096, new long[] {0, 0, 100}))).as("empty at the end").hasSize(1);
        assertRejected(table(100, 4096, new long[] {0, 10, 0}, new long[] {0, 11, 90}), "fragment 1 [90, +11)");
        assertRejected(table(100, 4096, new long[] {0, 0, 101}), "fragment 0 [101, +0)");
        assertRejected(table(100, 4096, new long[] {0, 1, -1}), "fragment 0 [-1, +1)");
        assertRejected(table(100, 4096, new long[] {0, 1, Long.MIN_VALUE}), "outside a receive of 100");
    }

    @Test
    void sourceMustLieInsideTheBounceArea() {
        assertThat(readAll(table(100, 4096, new long[] {4086, 10, 0}))).hasSize(1);
        assertRejected(table(100, 4096, new long[] {4087, 10, 0}), "reads [4087, +10) outside a bounce area of 4096");
        assertRejected(table(100, 4096, new long[] {4097, 0, 0}), "reads [4097, +0)");
        assertRejected(table(100, 0, new long[] {0, 1, 0}), "bounce area of 0");
    }

    @Test
    void offsetsAndLengthsAreUnsignedSoNothingWraps() {
        // 0xFFFFFFFF as srcOff and len is 4 GiB - 1, not -1: far outside both areas.
        assertRejected(table(100, 4096, new long[] {0xFFFF_FFFFL, 1, 0}), "reads [4294967295, +1)");
        assertRejected(table(100, 4096, new long[] {0, 0xFFFF_FFFFL, 0}), "[0, +4294967295)");
        // Receives of more than 2 GiB: size is unsigned too.
        assertThat(readAll(table(-2, 1L << 33, new long[] {0, 0xFFFF_FFFEL, 0}))).as("4 GiB - 2 into 4 GiB - 2")
                .hasSize(1);
        assertRejected(table(-2, 1L << 33, new long[] {0, 0xFFFF_FFFFL, 0}), "outside a receive of 4294967294");
        // A huge dstOff whose sum with len would wrap a signed long.
        assertRejected(table(100, 4096, new long[] {0, 10, Long.MAX_VALUE - 5}), "outside a receive of 100");
        assertRejected(table(100, Long.MAX_VALUE, new long[] {0xFFFF_FFFFL, 0xFFFF_FFFFL, 0}), "outside a receive");
    }

    @Test
    void aBadFragmentStopsTheReaderAtIt() {
        FragmentReader reader = new FragmentReader();
        reader.reset(table(100, 4096, new long[] {0, 10, 0}, new long[] {0, 10, 95}, new long[] {0, 10, 20}));
        assertThat(reader.next()).isTrue();
        assertThatThrownBy(reader::next).hasMessageContaining("fragment 1");
    }

    @Test
    void cpuUnpackerCopiesOnlyCheckedFragments() {
        long bounce = NativeMemory.allocate(4096, 4096);
        long dst = NativeMemory.allocate(4096, 4096);
        try {
            for (int i = 0; i < 64; i++) {
                NativeMemory.putLong(bounce + 8L * i, 0x0101_0101_0101_0101L * (i + 1));
            }
            NativeMemory.fill(dst, 4096, (byte) 0);
            long table = NativeMemory.allocate(2L * NetRequest.FRAGMENT_BYTES, 16);
            tables.add(table);
            NativeMemory.putInt(table, 8);
            NativeMemory.putInt(table + 4, 8);
            NativeMemory.putLong(table + 8, 0);
            NativeMemory.putInt(table + 16, 4090); // reads past the 4096-byte bounce area
            NativeMemory.putInt(table + 20, 8);
            NativeMemory.putLong(table + 24, 8);
            NetRequest request = new NetRequest() {
                @Override public int size() { return 16; }
                @Override public int fragmentCount() { return 2; }
                @Override public long fragmentsAddress() { return table; }
                @Override public long bounceBase() { return bounce; }
                @Override public long bounceBytes() { return 4096; }
                @Override public MemoryKind bounceKind() { return MemoryKind.DRAM; }
            };
            assertThatThrownBy(() -> CpuScatterGather.unpack(request, dst)).hasMessageContaining("fragment 1 reads [4090, +8)");
            assertThat(NativeMemory.getLong(dst)).as("fragment 0 copied").isEqualTo(0x0202_0202_0202_0202L);
            assertThat(NativeMemory.getLong(dst + 8)).as("fragment 1 not copied").isZero();
        } finally {
            NativeMemory.free(bounce);
            NativeMemory.free(dst);
        }
    }
}
