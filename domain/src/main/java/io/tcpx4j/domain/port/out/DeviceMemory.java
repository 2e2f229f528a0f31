package io.tcpx4j.domain.port.out;

import io.tcpx4j.api.EngineMemory;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;

/**
 * Host and device memory as the engine needs it: kinds and allocation ranges of pointers, copies for
 * local transfers and staging, pinned host buffers.
 *
 * <p>Thread-safe.
 */
public interface DeviceMemory extends EngineMemory {

    /** Whether a GPU is usable (VRAM allocations and copies work). */
    boolean hasDevices();

    /** VRAM for a CUDA device pointer, DRAM otherwise. */
    MemoryKind kindOf(long address);

    /**
     * The whole allocation that contains {@code address} (cuMemGetAddressRange for device memory).
     * For host memory, where no such query exists, the range {@code [address, address+length)}.
     */
    MemoryDescriptor allocationRange(long address, long length);

    /** Allocates memory of a kind: 4 KiB aligned, not initialised. */
    MemoryDescriptor allocate(MemoryKind kind, long size, int device);

    /**
     * Allocates host memory that is page-locked and mapped for the devices when there are any
     * (plain host memory otherwise). Its device-visible address is the same (unified addressing).
     */
    MemoryDescriptor allocatePinned(long size);

    /** Frees what {@link #allocate} or {@link #allocatePinned} returned. */
    void free(MemoryDescriptor memory);

    /** Copies synchronously between any two kinds. */
    void copy(MemoryDescriptor destination, MemoryDescriptor source);

    /** Starts an asynchronous copy; its ticket goes to {@link #isDone(long)}. */
    long copyAsync(MemoryDescriptor destination, MemoryDescriptor source);

    /** Whether an asynchronous copy finished. Throws a TransferException (BACKEND) if it failed. */
    boolean isDone(long ticket);

    @Override
    default void close() {
    }
}
