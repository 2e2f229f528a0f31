package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;

import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * What device memory pays on the loopback transport, which moves it through host memory, on GPU 0:
 * how long after it is issued a staging copy (device to pinned host memory, as a send of a CUDA
 * source makes) is seen done, by size; and how fast 512 KiB receives move from permuted 4 KiB bounce
 * pages in pinned host memory into device memory through the unpacker (one receive per batch, and 16),
 * against the copy engine moving the same bytes in the same run. Test scope, run from the module's test
 * classes like {@link UnpackBench} ({@code scripts/device/run.sh}, stage {@code staging}).
 *
 * <pre>
 * java -cp ... io.tcpx4j.cuda.StagingBench [--rounds 401]
 * </pre>
 */
public final class StagingBench {

    private static final int CHUNK = 512 << 10;
    private static final int CHUNKS = 128;
    private static final int PAGE = 4096;

    private StagingBench() {
    }

    public static void main(String[] args) {
        int rounds = 401;
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].equals("--rounds") || i + 1 == args.length) {
                throw new IllegalArgumentException("usage: StagingBench [--rounds N], not " + String.join(" ", args));
            }
            rounds = Integer.parseInt(args[i + 1]);
        }
        if (rounds < 20) {
            throw new IllegalArgumentException("--rounds must be at least 20, was " + rounds);
        }
        if (!Cuda.isAvailable()) {
            System.err.println("StagingBench: no usable GPU");
            System.exit(2);
        }
        try (CudaDeviceMemory memory = new CudaDeviceMemory()) {
            MemoryDescriptor host = memory.allocatePinned((long) CHUNK * CHUNKS);
            MemoryDescriptor vram = memory.allocate(MemoryKind.VRAM, (long) CHUNK * CHUNKS, 0);
            stagingLatency(memory, host, vram, rounds);
            bounceToDevice(memory, host, vram, Math.max(5, rounds / 20));
            memory.free(host);
            memory.free(vram);
        }
    }

    /** Median and spread of the µs from issuing device-to-host copies to seeing the last one done. */
    private static void stagingLatency(CudaDeviceMemory memory, MemoryDescriptor host, MemoryDescriptor vram,
                                       int rounds) {
        System.out.println("| staging copy, device to pinned host | median µs | p10–p90 µs |");
        System.out.println("| --- | --- | --- |");
        for (int size : new int[] {64 << 10, 256 << 10, 512 << 10, 1 << 20}) {
            row(size / 1024 + " KiB, issued to seen done", rounds, () -> memory.copyAsync(host.slice(0, size),
                    vram.slice(0, size)), memory);
        }
        row("2 x 512 KiB back to back, the second seen done", rounds, () -> {
            memory.copyAsync(host.slice(0, CHUNK), vram.slice(0, CHUNK));
            return memory.copyAsync(host.slice(CHUNK, CHUNK), vram.slice(CHUNK, CHUNK));
        }, memory);
    }

    private static void row(String name, int rounds, LongSupplier issue, CudaDeviceMemory memory) {
        double[] micros = new double[rounds];
        for (int r = -20; r < rounds; r++) {
            long t0 = System.nanoTime();
            long ticket = issue.getAsLong();
            while (!memory.isDone(ticket)) {
                Thread.onSpinWait();
            }
            if (r >= 0) {
                micros[r] = (System.nanoTime() - t0) / 1e3;
            }
        }
        Arrays.sort(micros);
        System.out.printf("| %s | %.1f | %.1f–%.1f |%n", name, micros[rounds / 2], micros[rounds / 10],
                micros[rounds * 9 / 10]);
    }

    /** GB/s of 128 receives of 512 KiB from pinned bounce pages into device memory, three ways. */
    private static void bounceToDevice(CudaDeviceMemory memory, MemoryDescriptor bounce, MemoryDescriptor vram,
                                       int rounds) {
        int pages = CHUNK / PAGE;
        HostRequest[] requests = new HostRequest[CHUNKS];
        for (int i = 0; i < CHUNKS; i++) {
            long[][] fragments = new long[pages][];
            for (int p = 0; p < pages; p++) {
                int q = (p * 37 + 11) % pages; // a permutation of the chunk's pages, as bounce pages come
                fragments[p] = new long[] {(long) i * CHUNK + (long) q * PAGE, PAGE, (long) p * PAGE};
            }
            requests[i] = new HostRequest(CHUNK, fragments, bounce.address(), bounce.length(), MemoryKind.DRAM);
        }
        String[] names = {"unpacker, one receive per batch", "unpacker, 16 receives per batch",
            "copy engine (cuMemcpyAsync host to device, 512 KiB each)"};
        double[][] gbps = new double[names.length][rounds];
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0)) {
            for (int r = -3; r < rounds; r++) {
                for (int k = 0; k < names.length; k++) { // kinds take turns round by round
                    long t0 = System.nanoTime();
                    long last = 0;
                    for (int i = 0; i < CHUNKS; i++) {
                        long destination = vram.address() + (long) i * CHUNK;
                        if (k == 2) {
                            last = memory.copyAsync(vram.slice((long) i * CHUNK, CHUNK), bounce.slice((long) i * CHUNK,
                                    CHUNK));
                            continue;
                        }
                        unpacker.add(requests[i], destination, MemoryKind.VRAM);
                        if (k == 0 || i % 16 == 15) {
                            last = unpacker.submit();
                        }
                    }
                    while (!(k == 2 ? memory.isDone(last) : unpacker.isDone(last))) {
                        Thread.onSpinWait();
                    }
                    if (r >= 0) {
                        gbps[k][r] = (double) CHUNK * CHUNKS / (System.nanoTime() - t0);
                    }
                }
            }
        } finally {
            for (HostRequest h : requests) {
                h.close();
            }
        }
        System.out.println();
        System.out.println("| 128 x 512 KiB, pinned host bounce pages to device memory | median GB/s | min–max GB/s |");
        System.out.println("| --- | --- | --- |");
        for (int k = 0; k < names.length; k++) {
            double[] s = gbps[k];
            Arrays.sort(s);
            System.out.printf("| %s | %.1f | %.1f–%.1f |%n", names[k], s[rounds / 2], s[0], s[rounds - 1]);
        }
    }
}
