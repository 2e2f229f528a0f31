package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The host half of the CUDA unpacker (records, splitting), checked without a GPU; the fragment-table
 * checks themselves are FragmentReaderTest's (domain).
 */
class WorkListTest {

    @Test
    void splitsLongFragmentsIntoPiecesWithAbsoluteAddresses() {
        int len = 3 * WorkList.MAX_PIECE + 5;
        long bounce = 0x7000_0000_0000L;
        long destination = 0x5000_0000_0000L;
        try (HostRequest r = new HostRequest(len + 10, new long[][] {{4, len, 10}}, bounce, MemoryKind.VRAM)) {
            assertThat(new WorkList(0, 1).validate(r)).isEqualTo(4);
            long mem = NativeMemory.allocate(WorkList.bytesFor(8), 16);
            try {
                WorkList list = new WorkList(mem, 8);
                list.append(r, destination, full -> {
                    throw new AssertionError("no overflow expected");
                });
                assertThat(list.size()).isEqualTo(4);
                assertThat(list.bytes()).isEqualTo(len);
                for (int i = 0; i < 4; i++) {
                    assertThat(list.srcAt(i)).isEqualTo(bounce + 4 + (long) i * WorkList.MAX_PIECE);
                    assertThat(list.dstAt(i)).isEqualTo(destination + 10 + (long) i * WorkList.MAX_PIECE);
                    assertThat(list.lenAt(i)).isEqualTo(i < 3 ? WorkList.MAX_PIECE : 5);
                }
            } finally {
                NativeMemory.free(mem);
            }
        }
    }

    @Test
    void overflowContinuesInTheListItReturns() {
        long a = NativeMemory.allocate(WorkList.bytesFor(3), 16);
        long b = NativeMemory.allocate(WorkList.bytesFor(3), 16);
        try (HostRequest r = new HostRequest(5, new long[][] {{0, 1, 0}, {1, 1, 1}, {2, 1, 2}, {3, 1, 3}, {4, 1, 4}}, 100,
                MemoryKind.VRAM)) {
            WorkList first = new WorkList(a, 3);
            WorkList second = new WorkList(b, 3);
            List<WorkList> flushed = new ArrayList<>();
            WorkList last = first.append(r, 1000, full -> {
                flushed.add(full);
                return second;
            });
            assertThat(flushed).containsExactly(first);
            assertThat(last).isSameAs(second);
            assertThat(first.size()).isEqualTo(3);
            assertThat(second.size()).isEqualTo(2);
            assertThat(first.bytes()).isEqualTo(3);
            assertThat(second.bytes()).isEqualTo(2);
            assertThat(second.dstAt(1)).isEqualTo(1004);
        } finally {
            NativeMemory.free(a);
            NativeMemory.free(b);
        }
    }

    @Test
    void onePassAppendLeavesTheListUntouchedWhenItCannot() {
        long mem = NativeMemory.allocate(WorkList.bytesFor(5), 16);
        try (HostRequest three = new HostRequest(30, new long[][] {{0, 10, 0}, {0, 10, 10}, {0, 10, 20}}, 0, MemoryKind.VRAM);
             HostRequest bad = new HostRequest(30, new long[][] {{0, 10, 0}, {0, 10, 25}}, 0, MemoryKind.VRAM);
             HostRequest split = new HostRequest(3 * WorkList.MAX_PIECE, new long[][] {{0, 3 * WorkList.MAX_PIECE, 0}}, 0,
                     MemoryKind.VRAM)) {
            WorkList list = new WorkList(mem, 5);
            assertThat(list.appendIfFits(three, 1000)).isTrue();
            assertThat(list.size()).isEqualTo(3);
            assertThat(list.bytes()).isEqualTo(30);
            assertThatThrownBy(() -> list.appendIfFits(bad, 1000)).hasMessageContaining("fragment 1");
            assertThat(list.size()).as("rolled back").isEqualTo(3);
            assertThat(list.bytes()).as("rolled back").isEqualTo(30);
            assertThat(list.appendIfFits(split, 1000)).as("needs three records, two left").isFalse();
            assertThat(list.size()).isEqualTo(3);
            assertThat(list.appendIfFits(three, 2000)).as("needs three records").isFalse();
            assertThat(list.bytes()).isEqualTo(30);
            assertThat(list.dstAt(2)).isEqualTo(1020);
            list.clear();
            assertThat(list.bytes()).isZero();
        } finally {
            NativeMemory.free(mem);
        }
    }

    /** Executing the records on the host must give exactly what the CPU reference unpacker gives. */
    @Test
    void recordsReproduceTheCpuReference() {
        Random random = new Random(7);
        FragmentPlan plan = FragmentPlan.tcpLike(3 << 20, random);
        long bounce = NativeMemory.allocate(plan.bounceBytes(), 4096);
        long expected = NativeMemory.allocate(plan.destinationBytes(), 4096);
        long actual = NativeMemory.allocate(plan.destinationBytes(), 4096);
        long lists = NativeMemory.allocate(WorkList.bytesFor(1000), 16);
        try {
            byte[] data = new byte[(int) plan.bounceBytes()];
            random.nextBytes(data);
            NativeMemory.put(bounce, data, 0, data.length);
            NativeMemory.fill(expected, plan.destinationBytes(), (byte) 0xA5);
            NativeMemory.fill(actual, plan.destinationBytes(), (byte) 0xA5);
            WorkList list = new WorkList(lists, 1000);
            int[] executed = {0};
            WorkList.Overflow run = full -> {
                execute(full);
                executed[0] += full.size();
                full.clear();
                return full;
            };
            for (FragmentPlan.Receive rc : plan.receives()) {
                try (HostRequest r = new HostRequest(rc.size(), rc.fragments(), bounce, MemoryKind.DRAM)) {
                    CpuScatterGather.unpack(r, expected + rc.destinationOffset());
                    new WorkList(0, 1).validate(r);
                    list = list.append(r, actual + rc.destinationOffset(), run);
                }
            }
            executed[0] += list.size();
            execute(list);
            assertThat(executed[0]).isGreaterThan(1000);
            byte[] want = new byte[(int) plan.destinationBytes()];
            byte[] got = new byte[want.length];
            NativeMemory.get(expected, want, 0, want.length);
            NativeMemory.get(actual, got, 0, got.length);
            assertThat(got).isEqualTo(want);
        } finally {
            NativeMemory.free(bounce);
            NativeMemory.free(expected);
            NativeMemory.free(actual);
            NativeMemory.free(lists);
        }
    }

    private static void execute(WorkList list) {
        for (int i = 0; i < list.size(); i++) {
            NativeMemory.copy(list.srcAt(i), list.dstAt(i), list.lenAt(i));
        }
    }
}
