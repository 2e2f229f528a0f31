package io.tcpx4j.cli;

import com.google.inject.AbstractModule;
import com.google.inject.Module;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.OptionalBinder;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.HostAsVramDouble;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.testing.HostCopies;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test double of a host with {@code count} GPUs whose memory is host memory: the device count the CLI
 * checks ordinals against, and, for engines with GPU memory, a {@link Memory} that allocates "GPU memory"
 * of host memory labelled with the GPU asked for (and reports that GPU for it, as CUDA reports the owner
 * of a device address), with a CPU scatter-gather that reaches it. The engines' GPU paths (staging,
 * unpacking, several GPUs per side) run without a GPU; nothing here says whether real GPUs would work.
 * {@link #unavailable(String)} is a host where GPU memory is not usable.
 *
 * <p>Thread-safe.
 */
final class HostGpusDouble implements GpuHost {

    private final int count;
    private final String unavailable;

    /** A host of {@code count} usable GPUs. */
    HostGpusDouble(int count) {
        this(count, null);
    }

    private HostGpusDouble(int count, String unavailable) {
        this.count = count;
        this.unavailable = unavailable;
    }

    /** A host where GPU memory is not usable, for {@code why}. */
    static HostGpusDouble unavailable(String why) {
        return new HostGpusDouble(0, why);
    }

    @Override
    public int count() {
        return count;
    }

    @Override
    public String unavailable() {
        return unavailable;
    }

    @Override
    public Module module(int device) {
        if (device >= count) {
            throw new IllegalArgumentException("no GPU " + device + " in this double of " + count);
        }
        return new AbstractModule() {
            @Override
            protected void configure() {
                OptionalBinder.newOptionalBinder(binder(), DeviceMemory.class).setBinding().to(Memory.class);
                OptionalBinder.newOptionalBinder(binder(), ScatterGather.class).setBinding()
                        .to(HostAsVramDouble.Unpacking.class);
            }

            @Provides
            @Singleton
            Memory memory() {
                return new Memory(count);
            }

            @Provides
            HostAsVramDouble.Unpacking unpacking() {
                return new HostAsVramDouble.Unpacking();
            }
        };
    }

    /** "GPU memory" of host memory, each allocation labelled with its GPU. Thread-safe. */
    static final class Memory implements HostCopies {

        private record Allocation(long size, MemoryKind kind, int device) {
        }

        private final int count;
        private final Map<Long, Allocation> allocations = new ConcurrentHashMap<>();

        Memory(int count) {
            this.count = count;
        }

        @Override
        public boolean hasDevices() {
            return true;
        }

        @Override
        public MemoryKind kindOf(long address) {
            MemoryDescriptor a = find(address);
            return a == null ? MemoryKind.DRAM : a.kind();
        }

        @Override
        public MemoryDescriptor allocationRange(long address, long length) {
            MemoryDescriptor a = find(address);
            if (a == null) {
                return MemoryDescriptor.dram(address, length);
            }
            if (!a.contains(address, length)) {
                throw new TransferException(TransferException.Code.INVALID_PARAM, "runs past its allocation " + a);
            }
            return a;
        }

        private MemoryDescriptor find(long address) {
            for (Map.Entry<Long, Allocation> e : allocations.entrySet()) {
                Allocation a = e.getValue();
                if (address >= e.getKey() && address < e.getKey() + a.size()) {
                    return new MemoryDescriptor(e.getKey(), a.size(), a.kind(), a.device());
                }
            }
            return null;
        }

        @Override
        public MemoryDescriptor allocate(MemoryKind kind, long size, int device) {
            if (kind == MemoryKind.VRAM && (device < 0 || device >= count)) {
                throw new TransferException(TransferException.Code.INVALID_PARAM, "no GPU " + device);
            }
            long address = NativeMemory.allocate(size, NativeMemory.PAGE);
            int gpu = kind == MemoryKind.DRAM ? 0 : device;
            allocations.put(address, new Allocation(size, kind, gpu));
            return new MemoryDescriptor(address, size, kind, gpu);
        }

        @Override
        public MemoryDescriptor allocatePinned(long size) {
            return allocate(MemoryKind.DRAM, size, 0);
        }

        @Override
        public void free(MemoryDescriptor memory) {
            if (allocations.remove(memory.address()) == null) {
                throw new IllegalStateException("not allocated here: " + memory);
            }
            NativeMemory.free(memory.address());
        }

        /** Allocations not freed yet. */
        int live() {
            return allocations.size();
        }
    }
}
