package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.FragmentReader;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.testing.HostCopies;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test double of an engine's memory on a GPU host, made of host memory: every address is "VRAM" except
 * what the double itself allocated as host memory, and device allocations are host allocations it
 * remembers. With {@link Unpacking} (a CPU unpacker that accepts both kinds, since both are host memory
 * underneath) it lets the device paths of the engine run without a GPU. Thread-safe.
 */
public final class HostAsVramDouble implements HostCopies {

    /** Host allocations of this double: the only DRAM there is. */
    private final Map<Long, Long> host = new ConcurrentHashMap<>();
    /** Device allocations of this double (address to length). */
    private final Map<Long, Long> device = new ConcurrentHashMap<>();

    @Override
    public boolean hasDevices() {
        return true;
    }

    @Override
    public MemoryKind kindOf(long address) {
        for (Map.Entry<Long, Long> e : host.entrySet()) {
            if (address >= e.getKey() && address < e.getKey() + e.getValue()) {
                return MemoryKind.DRAM;
            }
        }
        return MemoryKind.VRAM;
    }

    /** The 4 KiB pages that hold the range: what CUDA registrations need (the allocations are page aligned). */
    @Override
    public MemoryDescriptor allocationRange(long address, long length) {
        long start = address & -NativeMemory.PAGE;
        long end = (address + Math.max(length, 1) + NativeMemory.PAGE - 1) & -NativeMemory.PAGE;
        return new MemoryDescriptor(start, end - start, kindOf(address), 0);
    }

    @Override
    public MemoryDescriptor allocate(MemoryKind kind, long size, int gpu) {
        long address = NativeMemory.allocate(size, NativeMemory.PAGE);
        (kind == MemoryKind.DRAM ? host : device).put(address, size);
        return new MemoryDescriptor(address, size, kind, kind == MemoryKind.DRAM ? 0 : gpu);
    }

    @Override
    public MemoryDescriptor allocatePinned(long size) {
        return allocate(MemoryKind.DRAM, size, 0);
    }

    @Override
    public void free(MemoryDescriptor memory) {
        if (host.remove(memory.address()) == null && device.remove(memory.address()) == null) {
            throw new IllegalStateException("not allocated here: " + memory);
        }
        NativeMemory.free(memory.address());
    }

    /** Device allocations not freed yet. */
    public int deviceAllocations() {
        return device.size();
    }

    /** Unpacks and copies "VRAM" with the CPU; counts packed scatters and copies. Not thread-safe. */
    public static final class Unpacking implements ScatterGather {
        private final FragmentReader reader = new FragmentReader();
        private long ticket;
        public long scatters;
        public long copies;

        @Override
        public void add(NetRequest request, long destination, MemoryKind destinationKind) {
            CpuScatterGather.unpack(reader, request, destination);
        }

        @Override
        public void add(NetRequest request, long[] addresses, long[] lengths, int first, int end, MemoryKind kind) {
            reader.reset(request, addresses, lengths, first, end);
            while (reader.next()) {
                NativeMemory.copy(reader.source(), reader.destination(), reader.length());
            }
            scatters++;
        }

        @Override
        public void copy(long source, long destination, long length, MemoryKind kind) {
            if (length < 0) {
                throw new TransferException(TransferException.Code.INVALID_PARAM, "length " + length);
            }
            NativeMemory.copy(source, destination, length);
            copies++;
        }

        @Override
        public boolean reaches(MemoryKind kind) {
            return true;
        }

        @Override
        public long submit() {
            return ++ticket;
        }

        @Override
        public boolean isDone(long t) {
            return true;
        }
    }
}
