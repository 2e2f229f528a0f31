package io.tcpx4j.cli;

import io.tcpx4j.api.ByteSize;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.cli.layout.Stripes;
import io.tcpx4j.domain.port.out.DeviceMemory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The memory of one bench engine: its buffers (host memory, or GPU memory on the GPUs asked for) and the
 * pattern of {@code --check-consistency} written into them and checked, through a host staging buffer for
 * GPU memory, following where each buffer's bytes lie in the pattern ({@link Stripes.Placement}).
 *
 * <p>Thread-safe as its {@link DeviceMemory} is; one thread fills or checks a buffer at a time.
 */
final class BenchMemory {

    /** Staging piece for device memory checks. */
    private static final long STAGING = 64L << 20;

    private final DeviceMemory memory;
    private final MemoryKind kind;

    BenchMemory(DeviceMemory memory, MemoryKind kind) {
        this.memory = memory;
        this.kind = kind;
    }

    MemoryKind kind() {
        return kind;
    }

    /**
     * Allocates {@code bytes} of this memory's kind (4 KiB aligned), GPU memory on GPU 0.
     *
     * @throws Unavailable when the memory cannot be had (one line, exit 2)
     */
    MemoryDescriptor allocate(long bytes) {
        return allocate(bytes, 0);
    }

    /**
     * Allocates {@code bytes} of this memory's kind (4 KiB aligned), GPU memory on GPU {@code device}.
     *
     * @throws Unavailable when the memory cannot be had (one line, exit 2)
     */
    MemoryDescriptor allocate(long bytes, int device) {
        try {
            return memory.allocate(kind, bytes, kind == MemoryKind.DRAM ? 0 : device);
        } catch (OutOfMemoryError e) {
            throw new Unavailable("cannot allocate " + ByteSize.format(bytes) + " of " + kind
                    + (kind == MemoryKind.DRAM ? "" : " on GPU " + device) + " (" + e.getMessage()
                    + "): use smaller --block-sizes or --batch-sizes");
        }
    }

    /**
     * One buffer of {@code bytes} on each GPU of {@code devices}, in order, or one buffer of host memory
     * where this memory is host memory (then {@code devices} is empty).
     */
    Stripes allocate(List<Integer> devices, long bytes) {
        if (kind == MemoryKind.DRAM || devices.isEmpty()) {
            return Stripes.of(allocate(bytes));
        }
        List<MemoryDescriptor> buffers = new ArrayList<>();
        try {
            for (int d : devices) {
                buffers.add(allocate(bytes, d));
            }
        } catch (RuntimeException | Error e) {
            buffers.forEach(memory::free);
            throw e;
        }
        return new Stripes(buffers);
    }

    void free(MemoryDescriptor range) {
        memory.free(range);
    }

    void free(Stripes buffers) {
        buffers.buffers().forEach(memory::free);
    }

    /**
     * The GPU that holds {@code region} as the device memory reports it (for CUDA memory the driver's
     * answer, whatever ordinal the allocation asked for); -1 for host memory.
     */
    int deviceOf(MemoryDescriptor region) {
        if (region.kind() == MemoryKind.DRAM) {
            return -1;
        }
        return memory.allocationRange(region.address(), Math.max(1, region.length())).device();
    }

    /** Writes pattern {@code seed} into the first {@code bytes} of {@code region}. */
    void fill(MemoryDescriptor region, long bytes, long seed) {
        fill(region, bytes, seed, Stripes.Placement.PLAIN);
    }

    /** Writes pattern {@code seed} into the first {@code bytes} of {@code region}, which lie in it at {@code at}. */
    void fill(MemoryDescriptor region, long bytes, long seed, Stripes.Placement at) {
        if (region.kind() == MemoryKind.DRAM) {
            fillRuns(region.address(), 0, bytes, seed, at);
            return;
        }
        MemoryDescriptor staging = memory.allocatePinned(Math.min(bytes, STAGING));
        try {
            for (long off = 0; off < bytes; off += staging.length()) {
                long n = Math.min(staging.length(), bytes - off);
                fillRuns(staging.address(), off, n, seed, at);
                memory.copy(region.slice(off, n), staging.slice(0, n));
            }
        } finally {
            memory.free(staging);
        }
    }

    /** Counts bytes of the first {@code bytes} of {@code region} that differ from pattern {@code seed}. */
    long verify(MemoryDescriptor region, long bytes, long seed) {
        return verify(region, bytes, seed, Stripes.Placement.PLAIN);
    }

    /**
     * Counts bytes of the first {@code bytes} of {@code region}, which lie in pattern {@code seed} at
     * {@code at}, that differ from it.
     */
    long verify(MemoryDescriptor region, long bytes, long seed, Stripes.Placement at) {
        if (region.kind() == MemoryKind.DRAM) {
            return verifyRuns(region.address(), 0, bytes, seed, at);
        }
        MemoryDescriptor staging = memory.allocatePinned(Math.min(bytes, STAGING));
        try {
            long bad = 0;
            for (long off = 0; off < bytes; off += staging.length()) {
                long n = Math.min(staging.length(), bytes - off);
                memory.copy(staging.slice(0, n), region.slice(off, n));
                bad += verifyRuns(staging.address(), off, n, seed, at);
            }
            return bad;
        } finally {
            memory.free(staging);
        }
    }

    /**
     * Writes pattern {@code seed} into blocks {@code [first, first + count)} of a row of {@code block}-byte
     * blocks in {@code buffers}, block {@code first} being the pattern's start.
     */
    void fill(Stripes buffers, long first, long count, long block, long seed) {
        for (int i = 0; i < buffers.count(); i++) {
            Stripes.Part part = buffers.part(i, first, count, block);
            if (part.region().length() > 0) {
                fill(part.region(), part.region().length(), seed, part.placement());
            }
        }
    }

    /** Checks the blocks {@link #fill(Stripes, long, long, long, long)} writes, on every buffer. */
    Verified verify(Stripes buffers, long first, long count, long block, long seed) {
        Verified all = Verified.NONE;
        for (int i = 0; i < buffers.count(); i++) {
            Stripes.Part part = buffers.part(i, first, count, block);
            MemoryDescriptor region = part.region();
            if (region.length() > 0) {
                long bad = verify(region, region.length(), seed, part.placement());
                int gpu = deviceOf(region);
                all = all.plus(new Verified(bad, gpu < 0 ? Map.of() : Map.of(gpu, region.length())));
            }
        }
        return all;
    }

    /** Pattern bytes {@code [from, from + n)} of a range placed at {@code at}, written at {@code address}. */
    private static void fillRuns(long address, long from, long n, long seed, Stripes.Placement at) {
        for (long x = from, end; x < from + n; x = end) {
            end = Math.min(from + n, at.runEnd(x));
            Patterns.fill(address + (x - from), end - x, seed, at.streamOffset(x));
        }
    }

    /**
     * The bytes at {@code address} that differ from pattern bytes {@code [from, from + n)} of a range placed at
     * {@code at}.
     */
    private static long verifyRuns(long address, long from, long n, long seed, Stripes.Placement at) {
        long bad = 0;
        for (long x = from, end; x < from + n; x = end) {
            end = Math.min(from + n, at.runEnd(x));
            bad += Patterns.verify(address + (x - from), end - x, seed, at.streamOffset(x));
        }
        return bad;
    }
}
