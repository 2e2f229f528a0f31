package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;

import java.util.Set;

/**
 * Host buffers that packed chunks of one lane travel through: the sender gathers a run of descriptors
 * into a buffer and sends from it, the receiver receives into one and scatters it. One allocation of
 * {@link #SLOTS} buffers of a packed chunk each ({@link ChunkPlan#packedChunk}, 2 MiB in all at the
 * default chunk size), registered on the lane's comms like any region (lazily, on first use), made on
 * the first packed chunk. A lane that finds no free buffer waits for one of its own chunks to finish,
 * so lanes never wait on each other.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class StagingPool {

    /** Buffers per lane: packed chunks of one direction of one connection in flight at once. */
    static final int SLOTS = 16;

    private final NetTransport transport;
    private final Set<RegistrationGroup> registered;
    private LocalRegion region;
    private int slotSize;
    private final int[] free = new int[SLOTS];
    private int freeCount;

    /** {@code registered}: where the pipeline tracks the groups it registered, to drop them at close. */
    StagingPool(NetTransport transport, Set<RegistrationGroup> registered) {
        this.transport = transport;
        this.registered = registered;
    }

    /**
     * A free buffer of at least {@code bytes} bytes for a chunk of a plan with {@code chunkSize}, or -1
     * if all are in use (or the buffers are smaller and some are in use).
     */
    int take(int bytes, int chunkSize) {
        if (region == null || slotSize < bytes) {
            if (region != null && freeCount < SLOTS) {
                return -1;
            }
            allocate(Math.max(bytes, ChunkPlan.packedChunk(chunkSize)));
        }
        return freeCount == 0 ? -1 : free[--freeCount];
    }

    /** Returns buffer {@code slot}. */
    void give(int slot) {
        free[freeCount++] = slot;
    }

    long address(int slot) {
        return region.range.address() + (long) slot * slotSize;
    }

    /** The region every buffer lies in (for the transport registration). */
    LocalRegion region() {
        return region;
    }

    private void allocate(int size) {
        release();
        int rounded = (int) Math.min(Integer.MAX_VALUE, (size + NativeMemory.PAGE - 1L) / NativeMemory.PAGE * NativeMemory.PAGE);
        long bytes = (long) rounded * SLOTS;
        long address = NativeMemory.allocate(bytes, NativeMemory.PAGE);
        region = new LocalRegion(null, new MemoryDescriptor(address, bytes, MemoryKind.DRAM, 0),
                new RegistrationGroup(-1, address, bytes, PtrType.HOST), new byte[0]);
        slotSize = rounded;
        freeCount = SLOTS;
        for (int i = 0; i < SLOTS; i++) {
            free[i] = SLOTS - 1 - i;
        }
    }

    /** Drops the buffers' registrations and frees them; the comms must not use them any more. */
    void release() {
        if (region != null) {
            region.group.forgetAll(transport);
            registered.remove(region.group);
            NativeMemory.free(region.range.address());
            region = null;
            freeCount = 0;
        }
    }
}
