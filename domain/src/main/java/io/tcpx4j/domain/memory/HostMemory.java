package io.tcpx4j.domain.memory;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.DeviceMemory;

/**
 * {@link DeviceMemory} for a machine without a usable GPU: every pointer is host memory, copies are
 * memcpy, pinned buffers are plain aligned allocations, asynchronous copies finish at once.
 *
 * <p>Thread-safe.
 */
public final class HostMemory implements DeviceMemory {

    @Override
    public boolean hasDevices() {
        return false;
    }

    @Override
    public MemoryKind kindOf(long address) {
        return MemoryKind.DRAM;
    }

    @Override
    public MemoryDescriptor allocationRange(long address, long length) {
        return MemoryDescriptor.dram(address, length);
    }

    @Override
    public MemoryDescriptor allocate(MemoryKind kind, long size, int device) {
        if (kind != MemoryKind.DRAM) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "no GPU here: VRAM needs the cuda-unpack module on a machine with a CUDA driver");
        }
        return MemoryDescriptor.dram(NativeMemory.allocate(size, NativeMemory.PAGE), size);
    }

    @Override
    public MemoryDescriptor allocatePinned(long size) {
        return allocate(MemoryKind.DRAM, size, 0);
    }

    @Override
    public void free(MemoryDescriptor memory) {
        NativeMemory.free(memory.address());
    }

    @Override
    public void copy(MemoryDescriptor destination, MemoryDescriptor source) {
        checkCopy(destination, source);
        NativeMemory.copy(source.address(), destination.address(), source.length());
    }

    @Override
    public long copyAsync(MemoryDescriptor destination, MemoryDescriptor source) {
        copy(destination, source);
        return 1;
    }

    @Override
    public boolean isDone(long ticket) {
        return true;
    }

    static void checkCopy(MemoryDescriptor destination, MemoryDescriptor source) {
        if (destination.length() != source.length()) {
            throw new TransferException(TransferException.Code.MISMATCH,
                    "copy of " + source.length() + " bytes into " + destination.length());
        }
        if (destination.kind() != MemoryKind.DRAM || source.kind() != MemoryKind.DRAM) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED, "no GPU here: cannot copy VRAM");
        }
    }
}
