package io.tcpx4j.it.gpu;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.cuda.CudaDeviceMemory;
import io.tcpx4j.cuda.CudaScatterGather;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * One engine on one GPU (or on host memory, to exercise the same code without a GPU): the loopback
 * transport with the given {@link DeviceMemory}, a {@link CudaScatterGather} on {@code device} when that
 * memory is CUDA's (else the CPU unpacker), started with its own progress thread. Also the host-side
 * helpers that fill, poison, compare and checksum VRAM through a pinned staging buffer in slices.
 *
 * <p>Closes the engine, transport, unpacker and its allocations; never the shared memory.
 */
final class GpuNode implements AutoCloseable {

    /** Staging slice for fills, checks and checksums. */
    static final int SLICE = 64 << 20;

    final DeviceMemory memory;
    final MemoryKind kind;
    final int device;
    final ScatterGather unpacker;
    final LoopbackTransport transport;
    final Engine engine;
    private final List<MemoryDescriptor> allocations = new ArrayList<>();
    private final MemoryDescriptor staging;
    private final MemoryDescriptor staging2;

    /**
     * @param memory   a {@link CudaDeviceMemory} (VRAM buffers, CUDA unpack) or any host
     *                 {@code DeviceMemory} (DRAM buffers, CPU unpack)
     * @param channels data channels per connection
     * @param sockets  TCP sockets per comm
     * @param chunkSize engine chunk size (bytes per network message)
     */
    GpuNode(String name, DeviceMemory memory, int device, int channels, int sockets, int ioThreads) {
        this(name, memory, device, channels, sockets, ioThreads, EngineConfig.DEFAULT_CHUNK);
    }

    GpuNode(String name, DeviceMemory memory, int device, int channels, int sockets, int ioThreads, int chunkSize) {
        this(name, memory, device, channels, sockets, ioThreads, chunkSize, 1);
    }

    /** @param agents the engine's progress agents (each further one with its own unpacker, made by the engine) */
    GpuNode(String name, DeviceMemory memory, int device, int channels, int sockets, int ioThreads, int chunkSize,
            int agents) {
        this.memory = memory;
        this.kind = memory instanceof CudaDeviceMemory ? MemoryKind.VRAM : MemoryKind.DRAM;
        this.device = device;
        this.unpacker = memory instanceof CudaDeviceMemory cuda ? new CudaScatterGather(cuda, device) : new CpuScatterGather();
        // Receives into host memory land in place on a DRAM node (as the CLI and the NIXL backend run it);
        // receives into device memory always go through bounce pages.
        this.transport = new LoopbackTransport(LoopbackConfig.defaults().withSocketsPerComm(sockets)
                .withIoThreads(ioThreads).withDevmem(kind == MemoryKind.VRAM), memory);
        this.engine = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults(name).withChannels(channels)
                .withChunkSize(chunkSize).withAgents(agents)), transport, memory, unpacker, Clock.SYSTEM);
        this.engine.start();
        this.staging = memory.allocatePinned(SLICE);
        this.staging2 = memory.allocatePinned(SLICE);
    }

    /** A buffer of this node's kind (VRAM on its GPU, or DRAM), freed by {@link #close()}. */
    MemoryDescriptor allocate(long size) {
        MemoryDescriptor d = memory.allocate(kind, size, device);
        allocations.add(d);
        return d;
    }

    /** Fills {@code d} with pseudo-random bytes from {@code seed} (the same seed gives the same bytes). */
    void fillRandom(MemoryDescriptor d, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (long off = 0; off < d.length(); off += SLICE) {
            int n = (int) Math.min(SLICE, d.length() - off);
            long a = staging.address();
            int i = 0;
            for (; i + 8 <= n; i += 8) {
                NativeMemory.putLong(a + i, random.nextLong());
            }
            for (; i < n; i++) {
                NativeMemory.putByte(a + i, (byte) random.nextInt());
            }
            memory.copy(d.slice(off, n), staging.slice(0, n));
        }
    }

    /** Fills {@code d} with {@code value}. */
    void poison(MemoryDescriptor d, byte value) {
        NativeMemory.fill(staging.address(), SLICE, value);
        for (long off = 0; off < d.length(); off += SLICE) {
            int n = (int) Math.min(SLICE, d.length() - off);
            memory.copy(d.slice(off, n), staging.slice(0, n));
        }
    }

    /** CRC32C of {@code d}'s bytes. */
    long crc(MemoryDescriptor d) {
        CRC32C crc = new CRC32C();
        for (long off = 0; off < d.length(); off += SLICE) {
            int n = (int) Math.min(SLICE, d.length() - off);
            memory.copy(staging.slice(0, n), d.slice(off, n));
            crc.update(NativeMemory.view(staging.address(), n));
        }
        return crc.getValue();
    }

    /** Offset of the first byte where {@code a} and {@code b} (same length) differ, or -1. */
    long mismatch(MemoryDescriptor a, MemoryDescriptor b) {
        if (a.length() != b.length()) {
            throw new IllegalArgumentException(a + " vs " + b);
        }
        for (long off = 0; off < a.length(); off += SLICE) {
            int n = (int) Math.min(SLICE, a.length() - off);
            memory.copy(staging.slice(0, n), a.slice(off, n));
            memory.copy(staging2.slice(0, n), b.slice(off, n));
            int m = NativeMemory.view(staging.address(), n).mismatch(NativeMemory.view(staging2.address(), n));
            if (m >= 0) {
                return off + m;
            }
        }
        return -1;
    }

    /** Offset of the first byte of {@code d} that is not {@code value}, or -1. */
    long firstNot(MemoryDescriptor d, byte value) {
        NativeMemory.fill(staging2.address(), SLICE, value);
        for (long off = 0; off < d.length(); off += SLICE) {
            int n = (int) Math.min(SLICE, d.length() - off);
            memory.copy(staging.slice(0, n), d.slice(off, n));
            ByteBuffer expected = NativeMemory.view(staging2.address(), n);
            int m = NativeMemory.view(staging.address(), n).mismatch(expected);
            if (m >= 0) {
                return off + m;
            }
        }
        return -1;
    }

    @Override
    public void close() {
        engine.close();
        transport.close();
        unpacker.close();
        for (MemoryDescriptor d : allocations) {
            memory.free(d);
        }
        memory.free(staging);
        memory.free(staging2);
    }
}
