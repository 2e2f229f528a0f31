package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An unpack kernel on GPU 0 working on buffers of GPU 1, as an engine whose buffers spread over several
 * GPUs has it do: it scatters a receive from pinned bounce pages into GPU 1 and copies within GPU 1.
 * Needs two GPUs (skipped with fewer).
 */
@GpuTest
class PeerAccessGpuTest {

    private final Random random = new Random();

    @Test
    void aKernelOnOneGpuScattersIntoAndCopiesWithinAnother() throws InterruptedException {
        assumeTrue(Cuda.deviceCount() >= 2, "needs 2 GPUs, this host has " + Cuda.deviceCount());
        FragmentPlan plan = FragmentPlan.tcpLike(4 << 20, random);
        int n = (int) plan.destinationBytes();
        try (CudaDeviceMemory memory = new CudaDeviceMemory()) {
            // GPU 1's memory first, GPU 0's kernel second: the contexts meet in either order
            MemoryDescriptor destination = memory.allocate(MemoryKind.VRAM, n, 1);
            MemoryDescriptor copy = memory.allocate(MemoryKind.VRAM, n, 1);
            MemoryDescriptor bounce = memory.allocatePinned(Math.max(1, plan.bounceBytes()));
            long expected = NativeMemory.allocate(n, 4096);
            long got = NativeMemory.allocate(n, 4096);
            List<HostRequest> requests = new ArrayList<>();
            try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0)) {
                assertThat(memory.allocationRange(destination.address(), n).device()).isEqualTo(1);
                byte[] data = new byte[(int) bounce.length()];
                random.nextBytes(data);
                NativeMemory.put(bounce.address(), data, 0, data.length);
                NativeMemory.fill(expected, n, (byte) 0x5A);
                memory.copy(destination, MemoryDescriptor.dram(expected, n));
                for (FragmentPlan.Receive rc : plan.receives()) {
                    try (HostRequest reference = new HostRequest(rc.size(), rc.fragments(), bounce.address(),
                            MemoryKind.DRAM)) {
                        CpuScatterGather.unpack(reference, expected + rc.destinationOffset());
                    }
                    HostRequest r = new HostRequest(rc.size(), rc.fragments(), bounce.address(), MemoryKind.DRAM);
                    requests.add(r);
                    unpacker.add(r, destination.address() + rc.destinationOffset(), MemoryKind.VRAM);
                }
                await(unpacker, unpacker.submit());
                unpacker.copy(destination.address(), copy.address(), n, MemoryKind.VRAM);
                await(unpacker, unpacker.submit());
            }
            byte[] want = new byte[n];
            NativeMemory.get(expected, want, 0, n);
            for (MemoryDescriptor onGpu1 : List.of(destination, copy)) {
                memory.copy(MemoryDescriptor.dram(got, n), onGpu1);
                byte[] have = new byte[n];
                NativeMemory.get(got, have, 0, n);
                assertThat(Arrays.mismatch(want, have)).as("first differing byte on GPU 1").isEqualTo(-1);
            }
            requests.forEach(HostRequest::close);
            NativeMemory.free(expected);
            NativeMemory.free(got);
        }
    }

    private static void await(CudaScatterGather unpacker, long ticket) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!unpacker.isDone(ticket)) {
            assertThat(System.nanoTime()).as("batch done within 30 s").isLessThan(deadline);
            Thread.sleep(0, 50_000);
        }
    }
}
