package io.tcpx4j.api;

import java.util.Objects;

/**
 * A contiguous range of memory: a native address, a length, where it lives and on which device.
 * For {@link MemoryKind#DRAM} the device id is informational (NUMA node or 0).
 *
 * @param address native address (host pointer or CUDA device pointer)
 * @param length  length in bytes, at least 0
 * @param kind    DRAM or VRAM
 * @param device  GPU ordinal for VRAM, 0 or a NUMA node for DRAM; at least 0
 */
public record MemoryDescriptor(long address, long length, MemoryKind kind, int device) {

    public MemoryDescriptor {
        Objects.requireNonNull(kind, "kind");
        if (length < 0) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "negative length " + length);
        }
        if (device < 0) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "negative device " + device);
        }
        if (length > 0 && Long.compareUnsigned(address + length, address) < 0) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "range wraps around the address space: 0x" + Long.toHexString(address) + " + " + length);
        }
    }

    public static MemoryDescriptor dram(long address, long length) {
        return new MemoryDescriptor(address, length, MemoryKind.DRAM, 0);
    }

    public static MemoryDescriptor vram(long address, long length, int device) {
        return new MemoryDescriptor(address, length, MemoryKind.VRAM, device);
    }

    /** Exclusive end address. */
    public long end() {
        return address + length;
    }

    /** Whether {@code [addr, addr+len)} lies inside this range (unsigned, overflow-safe). */
    public boolean contains(long addr, long len) {
        if (len < 0) {
            return false;
        }
        long off = addr - address;
        return Long.compareUnsigned(addr, address) >= 0
                && Long.compareUnsigned(off, length) <= 0
                && Long.compareUnsigned(len, length - off) <= 0;
    }

    /** A sub-range of this descriptor, same kind and device. */
    public MemoryDescriptor slice(long offset, long len) {
        if (offset < 0 || len < 0 || offset > length || len > length - offset) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "slice [" + offset + ", +" + len + ") outside a range of " + length + " bytes");
        }
        return new MemoryDescriptor(address + offset, len, kind, device);
    }

    @Override
    public String toString() {
        return kind + "[dev " + device + "] 0x" + Long.toHexString(address) + "+" + length;
    }
}
