package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.registration.RegistrationGroup;
import io.tcpx4j.domain.transfer.Packing;

/**
 * Buffers that packed chunks of one direction travel through: the sender gathers a run of descriptors
 * into a buffer and sends from it, the receiver receives into one and scatters it. One allocation of
 * {@link #SLOTS} buffers of the kind's largest packed chunk ({@link Packing#HOST_CHUNK}: 2 MiB in all;
 * {@link Packing#DEVICE_CHUNK}: 8 MiB), made on the first packed
 * chunk and registered on the direction's comms like any region (lazily, on first use): host memory for runs
 * of host memory, device memory of the runs' GPU for runs of device memory (registered as CUDA memory,
 * so that a GPUDirect transport sends from and receives into it as from any GPU buffer). A direction that
 * finds no free buffer waits for one of its own chunks to finish, so directions never wait on each other.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class StagingPool {

    /** Buffers per pool: packed chunks of one direction of one connection in flight at once. */
    static final int SLOTS = 16;

    private final DeviceMemory memory;
    private final MemoryKind kind;
    private final int device;
    /** Bytes per buffer: the largest packed chunk of the pool's kind. */
    private final int slotBytes;
    private LocalRegion region;
    private final int[] free = new int[SLOTS];
    private int freeCount;

    /** A pool of host memory. */
    StagingPool() {
        this(null, MemoryKind.DRAM, 0);
    }

    /** A pool of {@code kind} memory on GPU {@code device}, allocated through {@code memory} (null for host). */
    StagingPool(DeviceMemory memory, MemoryKind kind, int device) {
        this.memory = memory;
        this.kind = kind;
        this.device = device;
        this.slotBytes = Packing.maxChunk(kind);
    }

    /** A free buffer (its index), or -1 if all are in use. */
    int take() {
        if (region == null) {
            long bytes = (long) slotBytes * SLOTS;
            MemoryDescriptor range;
            PtrType type;
            if (kind == MemoryKind.DRAM) {
                range = new MemoryDescriptor(NativeMemory.allocate(bytes, NativeMemory.PAGE), bytes, MemoryKind.DRAM, 0);
                type = PtrType.HOST;
            } else {
                range = memory.allocate(kind, bytes, device);
                type = PtrType.CUDA;
            }
            region = new LocalRegion(null, range, new RegistrationGroup(-1, range.address(), bytes, type), new byte[0]);
            for (int i = 0; i < SLOTS; i++) {
                free[freeCount++] = SLOTS - 1 - i;
            }
        }
        return freeCount == 0 ? -1 : free[--freeCount];
    }

    /** Returns buffer {@code slot}. */
    void give(int slot) {
        free[freeCount++] = slot;
    }

    long address(int slot) {
        return region.range.address() + (long) slot * slotBytes;
    }

    /** The region every buffer lies in (for the transport registration). */
    LocalRegion region() {
        return region;
    }

    /** Frees the buffers; the comms they were registered on are closed and dropped their registrations. */
    void release() {
        if (region != null) {
            if (kind == MemoryKind.DRAM) {
                NativeMemory.free(region.range.address());
            } else {
                memory.free(region.range);
            }
            region = null;
            freeCount = 0;
        }
    }
}
