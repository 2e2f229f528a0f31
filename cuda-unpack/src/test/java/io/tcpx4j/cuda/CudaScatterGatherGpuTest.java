package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import jcuda.driver.CUresult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static jcuda.driver.JCudaDriver.cuStreamWaitValue32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The unpack kernel against the CPU reference ({@link CpuScatterGather}): fresh random data for every
 * case, destinations poisoned first so that bytes written outside the fragments, or fragments left
 * unwritten, both show.
 */
@GpuTest
class CudaScatterGatherGpuTest {

    private static final byte POISON = (byte) 0xA5;
    private static CudaDeviceMemory memory;
    private final Random random = new Random();

    @BeforeAll
    static void open() {
        memory = new CudaDeviceMemory();
    }

    @AfterAll
    static void close() {
        if (memory != null) {
            memory.close();
        }
    }

    @Test
    void theShippedPtxLoadsThroughTheJit() {
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0)) {
            assertThat(unpacker.kernelRegisters()).isBetween(1, 255);
            assertThat(unpacker.maxBlocks()).isPositive();
            assertThat(UnpackKernel.ptxVersion(UnpackKernel.shippedPtx())).isEqualTo(".version 8.2");
        }
    }

    @ParameterizedTest(name = "bounce {0}, destination {1}, records in VRAM {2}")
    @CsvSource({"VRAM, VRAM, false", "DRAM, VRAM, false", "VRAM, DRAM, false", "VRAM, VRAM, true"})
    void randomFragmentListsMatchTheCpuReference(MemoryKind bounce, MemoryKind destination, boolean deviceRecords) {
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0,
                settings(CudaScatterGather.Settings.DEFAULT.recordsPerLaunch(), deviceRecords))) {
            for (int round = 0; round < 6; round++) {
                check(unpacker, adversarial(random, Integer.MAX_VALUE), bounce, destination);
            }
            // Short fragments only: the kernel splits warps into teams of 4, 8 or 16 lanes.
            for (int longest : new int[] {16, 100, 512, 1024, 2048}) {
                check(unpacker, adversarial(random, longest), bounce, destination);
            }
            check(unpacker, FragmentPlan.tcpLike(12 << 20, random), bounce, destination);
            check(unpacker, FragmentPlan.uniform(8 << 20, 4096, random), bounce, destination);
            check(unpacker, FragmentPlan.uniform(8 << 20, 1024, random), bounce, destination);
        }
    }

    /**
     * Every unit size the kernel takes (records per warp) and smaller blocks than its own: the same
     * bytes, with units and blocks that end inside a receive and a last unit left short.
     */
    @Test
    void everyUnitSizeAndBlockSizeGivesTheSameBytes() {
        TunedKernel kernel = new TunedKernel(memory, 0, testPtx());
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings(), kernel)) {
            FragmentPlan pages = FragmentPlan.uniform((4 << 20) + 3 * 4096, 4096, random);
            FragmentPlan mixed = adversarial(random, Integer.MAX_VALUE);
            for (int unit = 1; unit <= 8; unit++) {
                for (int block : new int[] {0, 32, 96}) {
                    kernel.fixUnit(unit);
                    kernel.fixBlock(block);
                    check(unpacker, pages, MemoryKind.VRAM, MemoryKind.VRAM);
                    check(unpacker, mixed, MemoryKind.VRAM, MemoryKind.VRAM);
                    assertThat(kernel.lastDeal()).as("unit %d, block %d", unit, block)
                            .startsWith("unit " + unit + ",").endsWith(block == 0 ? "" : " x " + block);
                }
            }
        }
    }

    /** Every source/destination misalignment modulo 16 with lengths around each path's edges. */
    @Test
    void everyAlignmentPairAndLengthEdge() {
        int[] lengths = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 513, 1000, 4095, 4096, 4111};
        List<long[]> frags = new ArrayList<>();
        long src = 0;
        long dst = 0;
        for (int s = 0; s < 16; s++) {
            for (int d = 0; d < 16; d++) {
                for (int len : lengths) {
                    src = (src + 64 + 15) / 16 * 16 + s;
                    dst = (dst + 3 + 15) / 16 * 16 + d; // a poisoned gap before each fragment
                    frags.add(new long[] {src, len, dst});
                    src += len;
                    dst += len;
                }
            }
        }
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings())) {
            check(unpacker, plan(frags, src + 64, dst + 64), MemoryKind.VRAM, MemoryKind.VRAM);
        }
    }

    @Test
    void oneBatchOverflowingItsWorkListLaunchesSeveralKernelsBehindOneTicket() {
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings(100, false))) {
            FragmentPlan plan = FragmentPlan.tcpLike(4 << 20, random);
            check(unpacker, plan, MemoryKind.VRAM, MemoryKind.VRAM);
            assertThat(unpacker.launches()).isGreaterThan(plan.receives().get(0).fragments().length / 100);
        }
    }

    /** Launches take the direct path (DirectDriver) on a GPU host, and it unpacks like the CPU reference. */
    @Test
    void kernelsLaunchStraightThroughTheDriver() throws InterruptedException {
        assertThat(DirectDriver.available()).as("libcuda.so.1 bound through JNA").isTrue();
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings())) {
            assertThat(unpacker.stream()).isInstanceOf(DirectDriver.Stream.class);
            check(unpacker, FragmentPlan.uniform(1 << 20, 4096, random), MemoryKind.VRAM, MemoryKind.VRAM);
            assertThat(unpacker.launches()).isEqualTo(1);
        }
    }

    @Test
    void workListsAreReusedOnceTheirLaunchFinished() throws InterruptedException {
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings())) {
            for (int i = 0; i < 20; i++) {
                check(unpacker, FragmentPlan.uniform(1 << 20, 4096, random), MemoryKind.VRAM, MemoryKind.VRAM);
            }
            assertThat(unpacker.workLists()).isLessThanOrEqualTo(2);
            assertThat(unpacker.launches()).isEqualTo(20);
        }
    }

    /** Blocks the unpacker's stream on a host flag: the ticket must stay pending until the flag flips. */
    @Test
    void theTicketGatesOnTheKernel() throws InterruptedException {
        MemoryDescriptor flag = memory.allocatePinned(4096);
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings())) {
            blockNextBatch(unpacker, flag);
            Buffers b = new Buffers(FragmentPlan.uniform(4 << 20, 4096, random), MemoryKind.VRAM, MemoryKind.VRAM);
            try {
                long ticket = b.submit(unpacker);
                try {
                    for (int i = 0; i < 20; i++) {
                        assertThat(unpacker.isDone(ticket)).as("done while the stream is blocked").isFalse();
                        Thread.sleep(5);
                    }
                } finally {
                    NativeMemory.putInt(flag.address(), 1); // never leave the stream blocked
                }
                b.awaitAndVerify(unpacker, ticket);
            } finally {
                b.close();
            }
        } finally {
            memory.free(flag);
        }
    }

    /**
     * Consecutive batches go to different streams: with the first batch's stream blocked, the
     * second still completes, and the first's ticket stays pending until the flag flips.
     */
    @Test
    void consecutiveBatchesCompleteIndependently() throws InterruptedException {
        MemoryDescriptor flag = memory.allocatePinned(4096);
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings())) {
            blockNextBatch(unpacker, flag);
            Buffers first = new Buffers(FragmentPlan.uniform(2 << 20, 4096, random), MemoryKind.VRAM, MemoryKind.VRAM);
            Buffers second = new Buffers(FragmentPlan.tcpLike(2 << 20, random), MemoryKind.VRAM, MemoryKind.VRAM);
            try {
                long blocked = first.submit(unpacker);
                try {
                    long free = second.submit(unpacker);
                    second.awaitAndVerify(unpacker, free);
                    assertThat(unpacker.isDone(blocked)).as("done while its stream is blocked").isFalse();
                } finally {
                    NativeMemory.putInt(flag.address(), 1); // never leave the stream blocked
                }
                first.awaitAndVerify(unpacker, blocked);
            } finally {
                first.close();
                second.close();
            }
        } finally {
            memory.free(flag);
        }
    }

    /**
     * Holds the stream the unpacker's next batch goes to until the int at {@code flag} reads 1 (the
     * caller sets it, always); skips the test where the GPU has no stream memory operations.
     */
    private static void blockNextBatch(CudaScatterGather unpacker, MemoryDescriptor flag) {
        NativeMemory.putInt(flag.address(), 0);
        int result = cuStreamWaitValue32(unpacker.stream(), Addresses.device(flag.address()), 1, 0 /* GEQ */);
        assumeTrue(result == CUresult.CUDA_SUCCESS, "stream memory operations unsupported: " + CUresult.stringFor(result));
    }

    @Test
    void hostToHostRunsOnTheCpuAndIsDoneAtOnce() {
        FragmentPlan plan = FragmentPlan.tcpLike(1 << 20, random);
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings())) {
            Buffers b = new Buffers(plan, MemoryKind.DRAM, MemoryKind.DRAM);
            try {
                long ticket = b.submit(unpacker);
                assertThat(unpacker.isDone(ticket)).isTrue();
                assertThat(unpacker.launches()).isZero();
                b.verify();
            } finally {
                b.close();
            }
        }
    }

    @Test
    void refusesHostMemoryTheGpuCannotReachAndBadTablesWhole() {
        MemoryDescriptor bounce = memory.allocate(MemoryKind.VRAM, 1 << 20, 0);
        long plain = NativeMemory.allocate(1 << 20, 4096);
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0, settings());
             HostRequest ok = new HostRequest(4096, new long[][] {{0, 4096, 0}}, bounce.address(), MemoryKind.VRAM);
             HostRequest bad = new HostRequest(4096, new long[][] {{0, 4096, 0}, {0, 1, 4096}}, bounce.address(),
                     MemoryKind.VRAM)) {
            assertThatThrownBy(() -> unpacker.add(ok, plain, MemoryKind.DRAM)).hasMessageContaining("NOT_SUPPORTED");
            assertThatThrownBy(() -> unpacker.add(bad, bounce.address(), MemoryKind.VRAM)).hasMessageContaining("BACKEND");
            assertThat(unpacker.submit()).as("nothing was queued").isZero();
            assertThat(unpacker.isDone(0)).isTrue();
        } finally {
            memory.free(bounce);
            NativeMemory.free(plain);
        }
    }

    /**
     * Settings for the unpacker under test; {@code -Dtcpx4j.test.ptx=file.ptx} runs the suite
     * against another build of the kernel (how the benchmark's variants are checked).
     */
    private static CudaScatterGather.Settings settings() {
        return settings(CudaScatterGather.Settings.DEFAULT.recordsPerLaunch(), false);
    }

    /** The PTX of {@code -Dtcpx4j.test.ptx}, or null for the shipped one. */
    private static byte[] testPtx() {
        String ptx = System.getProperty("tcpx4j.test.ptx");
        try {
            return ptx == null || ptx.isEmpty() ? null : java.nio.file.Files.readAllBytes(Path.of(ptx));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static CudaScatterGather.Settings settings(int records, boolean deviceRecords) {
        String ptx = System.getProperty("tcpx4j.test.ptx");
        return new CudaScatterGather.Settings(records, deviceRecords, ptx == null || ptx.isEmpty() ? null : Path.of(ptx));
    }

    private void check(CudaScatterGather unpacker, FragmentPlan plan, MemoryKind bounce, MemoryKind destination) {
        Buffers b = new Buffers(plan, bounce, destination);
        try {
            long ticket = b.submit(unpacker);
            assertThat(ticket).isPositive();
            b.awaitAndVerify(unpacker, ticket);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } finally {
            b.close();
        }
    }

    /** Bounce and destination areas for a plan, filled with fresh random data and poison. */
    private final class Buffers {
        final FragmentPlan plan;
        final MemoryKind destinationKind;
        final MemoryDescriptor bounce;
        final MemoryDescriptor destination;
        final long hostBounce;
        final long expected;
        final List<HostRequest> requests = new ArrayList<>();

        Buffers(FragmentPlan plan, MemoryKind bounceKind, MemoryKind destinationKind) {
            this.plan = plan;
            this.destinationKind = destinationKind;
            long bounceBytes = Math.max(1, plan.bounceBytes());
            long destinationBytes = Math.max(1, plan.destinationBytes());
            hostBounce = NativeMemory.allocate(bounceBytes, 4096);
            expected = NativeMemory.allocate(destinationBytes, 4096);
            bounce = allocate(bounceKind, bounceBytes);
            destination = allocate(destinationKind, destinationBytes);
            byte[] data = new byte[(int) bounceBytes];
            random.nextBytes(data);
            NativeMemory.put(hostBounce, data, 0, data.length);
            memory.copy(bounce, MemoryDescriptor.dram(hostBounce, bounceBytes));
            NativeMemory.fill(expected, destinationBytes, POISON);
            memory.copy(destination, MemoryDescriptor.dram(expected, destinationBytes));
            for (FragmentPlan.Receive rc : plan.receives()) {
                try (HostRequest reference = new HostRequest(rc.size(), rc.fragments(), hostBounce, MemoryKind.DRAM)) {
                    CpuScatterGather.unpack(reference, expected + rc.destinationOffset());
                }
                requests.add(new HostRequest(rc.size(), rc.fragments(), bounce.address(), bounceKind));
            }
        }

        private MemoryDescriptor allocate(MemoryKind kind, long bytes) {
            return kind == MemoryKind.VRAM ? memory.allocate(kind, bytes, 0)
                    : bytesOnHost(bytes);
        }

        private MemoryDescriptor bytesOnHost(long bytes) {
            // Host-to-host goes through the CPU, which needs no mapping; others need pinned memory.
            return memory.allocatePinned(bytes);
        }

        long submit(CudaScatterGather unpacker) {
            for (int i = 0; i < requests.size(); i++) {
                unpacker.add(requests.get(i), destination.address() + plan.receives().get(i).destinationOffset(),
                        destinationKind);
            }
            return unpacker.submit();
        }

        void awaitAndVerify(CudaScatterGather unpacker, long ticket) throws InterruptedException {
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!unpacker.isDone(ticket)) {
                assertThat(System.nanoTime()).as("batch done within 30 s").isLessThan(deadline);
                Thread.sleep(0, 50_000);
            }
            verify();
        }

        void verify() {
            int n = (int) destination.length();
            long got = NativeMemory.allocate(n, 4096);
            try {
                memory.copy(MemoryDescriptor.dram(got, n), destination);
                byte[] want = new byte[n];
                byte[] have = new byte[n];
                NativeMemory.get(expected, want, 0, n);
                NativeMemory.get(got, have, 0, n);
                int first = mismatch(want, have);
                assertThat(first).as("first differing destination byte (%d fragments, %d bytes)", countFragments(),
                        plan.payloadBytes()).isEqualTo(-1);
            } finally {
                NativeMemory.free(got);
            }
        }

        private int countFragments() {
            return plan.receives().stream().mapToInt(r -> r.fragments().length).sum();
        }

        void close() {
            requests.forEach(HostRequest::close);
            memory.free(bounce);
            memory.free(destination);
            NativeMemory.free(hostBounce);
            NativeMemory.free(expected);
        }
    }

    private static int mismatch(byte[] a, byte[] b) {
        return java.util.Arrays.mismatch(a, b);
    }

    /**
     * Nasty lists: lengths from 1 byte to several work-list pieces, sources anywhere (unaligned,
     * overlapping reads), destinations packed with poisoned gaps in random order within a receive.
     */
    static FragmentPlan adversarial(Random random, int longest) {
        int receives = 1 + random.nextInt(6);
        long bounceBytes = 8 << 20;
        List<long[]> frags = new ArrayList<>();
        List<FragmentPlan.Receive> plan = new ArrayList<>();
        long dst = 0;
        long payload = 0;
        for (int r = 0; r < receives; r++) {
            int count = 1 + random.nextInt(random.nextBoolean() ? 50 : NetRequest.MAX_FRAGMENTS);
            long base = dst;
            frags.clear();
            for (int i = 0; i < count; i++) {
                int len = switch (random.nextInt(200)) {
                    case 0 -> 1 + random.nextInt(3 * WorkList.MAX_PIECE);
                    case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 -> 1 + random.nextInt(16);
                    default -> 1 + random.nextInt(random.nextBoolean() ? 256 : 4096);
                };
                len = Math.min(len, longest);
                long src = random.nextInt((int) (bounceBytes - len));
                dst += random.nextInt(4);
                frags.add(new long[] {src, len, dst - base});
                dst += len;
                payload += len;
            }
            java.util.Collections.shuffle(frags, random); // destinations need not arrive in order
            plan.add(new FragmentPlan.Receive(base, (int) (dst - base), frags.toArray(long[][]::new)));
            dst += random.nextInt(4096);
        }
        return new FragmentPlan(plan, bounceBytes, dst, payload);
    }

    private static FragmentPlan plan(List<long[]> frags, long bounceBytes, long destinationBytes) {
        List<FragmentPlan.Receive> receives = new ArrayList<>();
        long payload = 0;
        for (int first = 0; first < frags.size(); first += NetRequest.MAX_FRAGMENTS) {
            List<long[]> part = frags.subList(first, Math.min(frags.size(), first + NetRequest.MAX_FRAGMENTS));
            long base = part.get(0)[2];
            long end = 0;
            long[][] table = new long[part.size()][];
            for (int i = 0; i < part.size(); i++) {
                long[] f = part.get(i);
                table[i] = new long[] {f[0], f[1], f[2] - base};
                end = Math.max(end, f[2] - base + f[1]);
                payload += f[1];
            }
            receives.add(new FragmentPlan.Receive(base, (int) end, table));
        }
        return new FragmentPlan(receives, bounceBytes, destinationBytes, payload);
    }
}
