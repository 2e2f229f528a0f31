package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@GpuTest
class CudaDeviceMemoryGpuTest {

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
    void deviceAllocationsArePageAlignedVramOfTheirDevice() {
        for (long size : new long[] {1, 100, 4095, 4096, 4097, (1 << 20) + 3}) {
            MemoryDescriptor m = memory.allocate(MemoryKind.VRAM, size, 0);
            try {
                assertThat(m.address() & 4095).as("alignment of %d bytes", size).isZero();
                assertThat(m.length()).isEqualTo(size);
                assertThat(m.kind()).isEqualTo(MemoryKind.VRAM);
                assertThat(memory.kindOf(m.address())).isEqualTo(MemoryKind.VRAM);
                assertThat(memory.kindOf(m.address() + size - 1)).isEqualTo(MemoryKind.VRAM);
                MemoryDescriptor range = memory.allocationRange(m.address() + size / 2, 1);
                assertThat(range.kind()).isEqualTo(MemoryKind.VRAM);
                assertThat(range.device()).isZero();
                assertThat(range.contains(m.address(), size)).isTrue();
            } finally {
                memory.free(m);
            }
        }
    }

    @Test
    void allocationRangeRejectsRangesRunningPastTheAllocation() {
        MemoryDescriptor m = memory.allocate(MemoryKind.VRAM, 1 << 20, 0);
        try {
            MemoryDescriptor range = memory.allocationRange(m.address(), 1);
            assertThatThrownBy(() -> memory.allocationRange(m.address(), range.end() - m.address() + 1))
                    .isInstanceOf(TransferException.class).hasMessageContaining("INVALID_PARAM");
        } finally {
            memory.free(m);
        }
    }

    @Test
    void pinnedMemoryIsDramThatTheGpuCanAddress() {
        MemoryDescriptor pinned = memory.allocatePinned(10_000);
        long plain = NativeMemory.allocate(4096, 4096);
        try {
            assertThat(pinned.kind()).isEqualTo(MemoryKind.DRAM);
            assertThat(memory.kindOf(pinned.address())).isEqualTo(MemoryKind.DRAM);
            assertThat(memory.isDeviceMappedHost(pinned.address())).isTrue();
            assertThat(memory.kindOf(plain)).isEqualTo(MemoryKind.DRAM);
            assertThat(memory.isDeviceMappedHost(plain)).isFalse();
            assertThat(memory.allocationRange(plain, 100)).isEqualTo(MemoryDescriptor.dram(plain, 100));
        } finally {
            memory.free(pinned);
            NativeMemory.free(plain);
        }
    }

    @Test
    void copiesMoveRandomDataThroughEveryDirection() {
        int size = (3 << 20) + 17;
        byte[] data = new byte[size];
        random.nextBytes(data);
        long plainIn = NativeMemory.allocate(size, 64);
        long plainOut = NativeMemory.allocate(size, 64);
        MemoryDescriptor pinned = memory.allocatePinned(size);
        MemoryDescriptor a = memory.allocate(MemoryKind.VRAM, size, 0);
        MemoryDescriptor b = memory.allocate(MemoryKind.VRAM, size, 0);
        try {
            NativeMemory.put(plainIn, data, 0, size);
            NativeMemory.fill(plainOut, size, (byte) 0x5A);
            memory.copy(a, MemoryDescriptor.dram(plainIn, size)); // pageable H2D
            memory.copy(b, a); // D2D
            memory.copy(pinned, b); // D2H pinned
            memory.copy(MemoryDescriptor.dram(plainOut, size), pinned); // host memcpy
            byte[] out = new byte[size];
            NativeMemory.get(plainOut, out, 0, size);
            assertThat(out).isEqualTo(data);
        } finally {
            memory.free(a);
            memory.free(b);
            memory.free(pinned);
            NativeMemory.free(plainIn);
            NativeMemory.free(plainOut);
        }
    }

    @Test
    void asyncCopiesCompleteBehindTheirTickets() throws InterruptedException {
        int size = 64 << 20;
        byte[] data = new byte[size];
        random.nextBytes(data);
        MemoryDescriptor in = memory.allocatePinned(size);
        MemoryDescriptor out = memory.allocatePinned(size);
        MemoryDescriptor vram = memory.allocate(MemoryKind.VRAM, size, 0);
        try {
            NativeMemory.put(in.address(), data, 0, size);
            NativeMemory.fill(out.address(), size, (byte) 0);
            long up = memory.copyAsync(vram, in);
            long down = memory.copyAsync(out, vram);
            assertThat(down).isNotEqualTo(up);
            awaitDone(down);
            assertThat(memory.isDone(up)).isTrue(); // same stream: earlier work is done too
            byte[] got = new byte[size];
            NativeMemory.get(out.address(), got, 0, size);
            assertThat(got).isEqualTo(data);
            assertThat(memory.isDone(down)).as("asking again").isTrue();
            assertThatThrownBy(() -> memory.isDone(down + (1 << 20))).hasMessageContaining("INVALID_PARAM");
            for (int i = 0; i < 500; i++) { // the event pool recycles: many tickets, few events
                awaitDone(memory.copyAsync(vram.slice(0, 4096), in.slice(0, 4096)));
            }
        } finally {
            memory.free(in);
            memory.free(out);
            memory.free(vram);
        }
    }

    @Test
    void misuseIsReportedWithCodes() {
        MemoryDescriptor a = memory.allocate(MemoryKind.VRAM, 4096, 0);
        try {
            assertThatThrownBy(() -> memory.free(MemoryDescriptor.vram(a.address() + 4096, 1, 0)))
                    .hasMessageContaining("INVALID_PARAM");
            assertThatThrownBy(() -> memory.copy(a, a.slice(0, 100))).hasMessageContaining("MISMATCH");
            assertThatThrownBy(() -> memory.allocate(MemoryKind.VRAM, 4096, memory.deviceCount()))
                    .hasMessageContaining("INVALID_PARAM");
            assertThatThrownBy(() -> memory.allocate(MemoryKind.VRAM, 0, 0)).hasMessageContaining("INVALID_PARAM");
        } finally {
            memory.free(a);
        }
    }

    @Test
    void closeFreesEverythingAndLaterUseFails() {
        CudaDeviceMemory own = new CudaDeviceMemory();
        MemoryDescriptor v = own.allocate(MemoryKind.VRAM, 1 << 20, 0);
        own.allocatePinned(1 << 20);
        long ticket = own.copyAsync(v.slice(0, 4096), v.slice(4096, 4096));
        assertThat(own.liveAllocations()).isEqualTo(2);
        own.close();
        assertThat(own.liveAllocations()).isZero();
        own.close(); // idempotent
        assertThatThrownBy(() -> own.allocate(MemoryKind.VRAM, 4096, 0)).hasMessageContaining("closed");
        assertThatThrownBy(() -> own.isDone(ticket)).hasMessageContaining("closed");
        // the shared primary context is still usable by others
        MemoryDescriptor still = memory.allocate(MemoryKind.VRAM, 4096, 0);
        memory.free(still);
    }

    static void awaitDone(CudaDeviceMemory memory, long ticket) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!memory.isDone(ticket)) {
            assertThat(System.nanoTime()).as("ticket %d done within 30 s", ticket).isLessThan(deadline);
            Thread.sleep(0, 100_000);
        }
    }

    private static void awaitDone(long ticket) throws InterruptedException {
        awaitDone(memory, ticket);
    }
}
