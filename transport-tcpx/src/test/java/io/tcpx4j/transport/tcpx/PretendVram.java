package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.FragmentReader;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.ScatterGather;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * {@link DeviceMemory} for the C test peer, whose "CUDA" memory is host memory registered as
 * NCCL_PTR_CUDA: allocations of VRAM (and ranges {@link #add added} as VRAM) are host memory that
 * reports itself as VRAM, so the adapter and the engine take their device-memory paths. Copies check
 * that each descriptor's kind is the truth about its range, so a caller that mislabels memory fails
 * here as it would with CUDA.
 *
 * <p>Thread-safe.
 */
final class PretendVram implements DeviceMemory {

    /** Start to end (exclusive) of every pretend-VRAM range. */
    private final ConcurrentSkipListMap<Long, Long> vram = new ConcurrentSkipListMap<>();

    /** Declares {@code [address, address + size)}, host memory the caller owns, VRAM. */
    void add(long address, long size) {
        vram.put(address, address + size);
    }

    private Map.Entry<Long, Long> rangeOf(long address) {
        Map.Entry<Long, Long> e = vram.floorEntry(address);
        return e != null && address < e.getValue() ? e : null;
    }

    @Override
    public boolean hasDevices() {
        return true;
    }

    @Override
    public MemoryKind kindOf(long address) {
        return rangeOf(address) != null ? MemoryKind.VRAM : MemoryKind.DRAM;
    }

    @Override
    public MemoryDescriptor allocationRange(long address, long length) {
        Map.Entry<Long, Long> e = rangeOf(address);
        return e != null ? MemoryDescriptor.vram(e.getKey(), e.getValue() - e.getKey(), 0)
                : MemoryDescriptor.dram(address, length);
    }

    @Override
    public MemoryDescriptor allocate(MemoryKind kind, long size, int device) {
        long a = NativeMemory.allocate(Math.max(size, 1), NativeMemory.PAGE);
        if (kind == MemoryKind.VRAM) {
            add(a, size);
            return MemoryDescriptor.vram(a, size, device);
        }
        return MemoryDescriptor.dram(a, size);
    }

    @Override
    public MemoryDescriptor allocatePinned(long size) {
        return allocate(MemoryKind.DRAM, size, 0);
    }

    @Override
    public void free(MemoryDescriptor memory) {
        vram.remove(memory.address());
        NativeMemory.free(memory.address());
    }

    @Override
    public void copy(MemoryDescriptor destination, MemoryDescriptor source) {
        if (destination.length() != source.length()) {
            throw new TransferException(TransferException.Code.MISMATCH,
                    "copy of " + source.length() + " bytes into " + destination.length());
        }
        checkKind(destination);
        checkKind(source);
        NativeMemory.copy(source.address(), destination.address(), source.length());
    }

    private void checkKind(MemoryDescriptor d) {
        if (d.length() > 0 && d.kind() != kindOf(d.address())) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "descriptor says " + d.kind()
                    + " for 0x" + Long.toHexString(d.address()) + ", which is " + kindOf(d.address()));
        }
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

    /**
     * The CPU unpacker for pretend VRAM: destinations of either kind (both are host memory
     * underneath), bounce pages in host memory only, as the test peer keeps them. Counts fragments.
     * <b>Not thread-safe.</b>
     */
    final class Unpacking implements ScatterGather {
        private final FragmentReader reader = new FragmentReader();
        long fragments;
        /** Packed receives scattered, and plain copies (gathers of packed sends). */
        long scatters;
        long copies;
        private long ticket;

        @Override
        public void add(NetRequest request, long destination, MemoryKind destinationKind) {
            if (destinationKind != kindOf(destination)) {
                throw new TransferException(TransferException.Code.INVALID_PARAM, "unpack destination 0x"
                        + Long.toHexString(destination) + " is " + kindOf(destination) + ", not " + destinationKind);
            }
            if (request.fragmentCount() > 0 && request.bounceKind() != MemoryKind.DRAM) {
                throw new TransferException(TransferException.Code.NOT_SUPPORTED, "the test peer's bounce pages"
                        + " are host memory; got " + request.bounceKind());
            }
            fragments += request.fragmentCount();
            CpuScatterGather.unpack(request, destination);
        }

        @Override
        public void add(NetRequest request, long[] addresses, long[] lengths, int first, int end, MemoryKind kind) {
            if (request.fragmentCount() > 0 && request.bounceKind() != MemoryKind.DRAM) {
                throw new TransferException(TransferException.Code.NOT_SUPPORTED, "the test peer's bounce pages"
                        + " are host memory; got " + request.bounceKind());
            }
            fragments += reader.reset(request, addresses, lengths, first, end);
            while (reader.next()) {
                requireKind(reader.destination(), kind);
                NativeMemory.copy(reader.source(), reader.destination(), reader.length());
            }
            scatters++;
        }

        @Override
        public void copy(long source, long destination, long length, MemoryKind kind) {
            requireKind(source, kind);
            requireKind(destination, kind);
            NativeMemory.copy(source, destination, length);
            copies++;
        }

        /** Pretend VRAM and host memory both: they are host memory underneath. */
        @Override
        public boolean reaches(MemoryKind kind) {
            return true;
        }

        private void requireKind(long address, MemoryKind kind) {
            if (kindOf(address) != kind) {
                throw new TransferException(TransferException.Code.INVALID_PARAM, "0x" + Long.toHexString(address)
                        + " is " + kindOf(address) + ", not " + kind);
            }
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
