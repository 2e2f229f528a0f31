package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamWaitEvent;

/**
 * Unpack throughput against {@code cuMemcpy} device-to-device in the same run, on GPU 0. Test
 * scope: it runs from the module's test classes (scripts/device/run.sh, stage {@code unpack}, puts
 * them on the class path as tcpx4j-cuda-unpack-tests.jar).
 *
 * <pre>
 * java -cp ... io.tcpx4j.cuda.UnpackBench [--mib 256] [--iters 15] [--warmup 3]
 *      [--ptx label=file.ptx ...] [--ptx-both label=file.ptx ...] [--units 1,2,4]
 *      [--blocks 64,128] [--cases REGEX] [--out results.md]
 * </pre>
 *
 * <p>Cases: 4 KiB fragments (TCPX pages, permuted), 1 KiB fragments, and TCP-like fragments (1 to
 * 4096 bytes at random page offsets, packed in the destination: unrelated alignments). Bounce and
 * destination are VRAM; each case copies about {@code --mib} MiB. GPU time is measured with events
 * around the launch (the host has finished building the work list by then); the host's cost (validate
 * plus work list plus launch) is measured separately with the wall clock. The kernel is also timed
 * relaunched 10 times back to back, like the copies it is compared with: an isolated launch after
 * ~1 ms of host work finds the GPU idle and its clocks down. Medians of {@code --iters}
 * after {@code --warmup}. Every kernel variant is first checked against the CPU reference on a
 * poisoned destination. {@code --units} also runs every kernel with each of these fixed unit sizes
 * (records per unit) besides its own choice, and {@code --blocks} each of these with blocks of these
 * thread counts besides the default; {@code --cases} keeps only the cases whose names
 * contain a match of the regular expression (e.g. {@code 4.KiB|1.KiB.shuffled$}). Back-to-back
 * launches take turns on the unpacker's two streams, as its batches do, and the copies they are
 * compared with likewise on two streams, so that consecutive ones may overlap for both.
 */
public final class UnpackBench {

    /** Launches (or copies) per timed interval in the back-to-back measurements. */
    private static final int REPEAT = 10;

    private final CudaDeviceMemory memory;
    private final int iters;
    private final int warmup;
    private final StringBuilder report = new StringBuilder();
    private int[] units = {0};
    private int[] blocks = {0}; // 0: the kernel's own block size
    private Pattern cases;

    private UnpackBench(CudaDeviceMemory memory, int iters, int warmup) {
        this.memory = memory;
        this.iters = iters;
        this.warmup = warmup;
    }

    public static void main(String[] args) throws Exception {
        long mib = 256;
        int iters = 15;
        int warmup = 3;
        Path out = null;
        String units = "";
        String cases = "";
        String blocks = "";
        List<String[]> variants = new ArrayList<>();
        variants.add(new String[] {"shipped", null});
        for (int i = 0; i < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--mib" -> mib = Long.parseLong(v);
                case "--iters" -> iters = Integer.parseInt(v);
                case "--warmup" -> warmup = Integer.parseInt(v);
                case "--out" -> out = Path.of(v);
                case "--units" -> units = v;
                case "--cases" -> cases = v;
                case "--blocks" -> blocks = v;
                case "--ptx" -> variants.add(v.split("=", 2));
                case "--ptx-both" -> variants.add(new String[] {v.split("=", 2)[0], v.split("=", 2)[1], "both"});
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (CudaDeviceMemory memory = new CudaDeviceMemory()) {
            UnpackBench bench = new UnpackBench(memory, iters, warmup);
            if (!units.isEmpty()) {
                // 0 first: every kernel also runs with its own choice.
                bench.units = IntStream.concat(IntStream.of(0), Arrays.stream(units.split(",")).mapToInt(Integer::parseInt))
                        .toArray();
                if (Arrays.stream(bench.units).skip(1).anyMatch(x -> x < 1 || x > 32)) {
                    throw new IllegalArgumentException("--units takes record counts 1..32: " + units);
                }
            }
            if (!blocks.isEmpty()) {
                bench.blocks = IntStream.concat(IntStream.of(0),
                        Arrays.stream(blocks.split(",")).mapToInt(Integer::parseInt)).toArray();
            }
            if (!cases.isEmpty()) {
                bench.cases = Pattern.compile(cases);
            }
            bench.line("UnpackBench " + Instant.now() + ", CUDA driver " + Cuda.driverVersion() + ", " + mib
                    + " MiB per case, median of " + iters + " after " + warmup + " warm-up"
                    + ", back to back over two streams");
            bench.line("");
            bench.line("| case | fragments | kernel | records | memcpy D2D GB/s | unpack GB/s, back to back | ratio | "
                    + "unpack GB/s, one launch after host work | ratio | host µs per launch | host ns per fragment |");
            bench.line("|---|---|---|---|---|---|---|---|---|---|---|");
            long bytes = mib << 20;
            int all = NetRequest.MAX_FRAGMENTS;
            // Bounce slots in order, shuffled within 2 MiB (one large GPU page), shuffled across all.
            for (int size : new int[] {4096, 1024}) {
                String name = size / 1024 + " KiB";
                int perTwoMiB = (2 << 20) / size;
                bench.run(name + " in order", FragmentPlan.uniform(bytes, size, all, 1, new Random(1)), variants);
                bench.run(name + " shuffled in 2 MiB", FragmentPlan.uniform(bytes, size, all, perTwoMiB, new Random(2)),
                        variants);
                bench.run(name + " shuffled", FragmentPlan.uniform(bytes, size, all, Integer.MAX_VALUE, new Random(3)),
                        variants);
            }
            bench.run("TCP-like 1..4096 B", FragmentPlan.tcpLike(bytes, new Random(3)), variants);
            bench.line("");
            bench.typicalBatches(variants);
            if (out != null) {
                Files.writeString(out, bench.report);
            }
        }
    }

    private void run(String name, FragmentPlan plan, List<String[]> variants) {
        if (cases != null && !cases.matcher(name).find()) {
            return;
        }
        Case c = new Case(plan);
        try {
            double memcpy = c.memcpyGbps();
            for (String[] v : variants) {
                // The shipped kernel and --ptx-both variants with the work list both ways; other
                // variants with the default (uploaded to VRAM).
                boolean both = v[1] == null || v.length > 2;
                for (boolean deviceRecords : both ? new boolean[] {false, true} : new boolean[] {true}) {
                    int records = plan.fragmentCount() + 16;
                    CudaScatterGather.Settings s = new CudaScatterGather.Settings(records, deviceRecords, null);
                    TunedKernel k = kernel(v[1]);
                    try (CudaScatterGather u = new CudaScatterGather(memory, 0, s, k)) {
                        Set<String> seen = new HashSet<>();
                        for (int block : blocks) {
                            k.fixBlock(block);
                            for (int unit : units) {
                                k.fixUnit(unit);
                                c.verify(u);
                                if (seen.add(k.lastDeal())) { // else the kernel capped it to one already measured
                                    line(c.row(name, v[0], u, k, deviceRecords, memcpy));
                                }
                            }
                        }
                    }
                }
            }
        } finally {
            c.close();
        }
    }

    /**
     * What the engine does per progress round: a batch of 16 receives of 128 pages (16 chunks of 512
     * KiB), add + submit on the host, then poll until done.
     */
    private void typicalBatches(List<String[]> variants) {
        FragmentPlan plan = FragmentPlan.uniform(8 << 20, 4096, 128, Integer.MAX_VALUE, new Random(4));
        Case c = new Case(plan);
        try {
            line("| batch: 16 receives x 128 x 4 KiB (8 MiB) | kernel | host add+submit µs | submit-to-done µs |");
            line("|---|---|---|---|");
            for (String[] v : variants) {
                CudaScatterGather.Settings s = new CudaScatterGather.Settings(CudaScatterGather.Settings.DEFAULT.recordsPerLaunch(),
                        false, null);
                try (CudaScatterGather u = new CudaScatterGather(memory, 0, s, kernel(v[1]))) {
                    c.verify(u);
                    int n = 200;
                    double[] host = new double[n];
                    double[] total = new double[n];
                    for (int i = 0; i < n + 20; i++) {
                        long t0 = System.nanoTime();
                        for (int r = 0; r < c.tables.requests().size(); r++) {
                            u.add(c.tables.requests().get(r), c.dst.address() + plan.receives().get(r).destinationOffset(),
                                    MemoryKind.VRAM);
                        }
                        long ticket = u.submit();
                        long t1 = System.nanoTime();
                        while (!u.isDone(ticket)) {
                            Thread.onSpinWait();
                        }
                        long t2 = System.nanoTime();
                        if (i >= 20) {
                            host[i - 20] = (t1 - t0) / 1e3;
                            total[i - 20] = (t2 - t1) / 1e3;
                        }
                    }
                    line(String.format("| | %s | %.1f | %.1f |", v[0], median(host), median(total)));
                }
            }
        } finally {
            c.close();
        }
    }

    /** The shipped kernel (file null) or the PTX in {@code file}, loaded on GPU 0. */
    private TunedKernel kernel(String file) {
        try {
            return new TunedKernel(memory, 0, file == null ? null : Files.readAllBytes(Path.of(file)));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Bounce and destination in VRAM for one plan, a CPU reference, and the timing events. */
    private final class Case {
        final FragmentPlan plan;
        final MemoryDescriptor bounce;
        final MemoryDescriptor dst;
        final long hostBounce;
        final long expected;
        final FragmentPlan.Tables tables;
        final CUevent start = new CUevent();
        final CUevent stop = new CUevent();
        final CUevent joined = new CUevent();
        /** The second stream back-to-back copies take turns on, as the unpacker's batches do. */
        final CUstream second;

        Case(FragmentPlan plan) {
            this.plan = plan;
            bounce = memory.allocate(MemoryKind.VRAM, plan.bounceBytes(), 0);
            dst = memory.allocate(MemoryKind.VRAM, plan.destinationBytes(), 0);
            hostBounce = NativeMemory.allocate(plan.bounceBytes(), 4096);
            expected = NativeMemory.allocate(plan.destinationBytes(), 4096);
            SplittableRandom random = new SplittableRandom(plan.fragmentCount());
            for (long off = 0; off + 8 <= plan.bounceBytes(); off += 8) {
                NativeMemory.putLong(hostBounce + off, random.nextLong());
            }
            memory.copy(bounce, MemoryDescriptor.dram(hostBounce, plan.bounceBytes()));
            NativeMemory.fill(expected, plan.destinationBytes(), (byte) 0xA5);
            try (FragmentPlan.Tables host = plan.tables(hostBounce, MemoryKind.DRAM)) {
                for (int r = 0; r < plan.receives().size(); r++) {
                    CpuScatterGather.unpack(host.requests().get(r), expected + plan.receives().get(r).destinationOffset());
                }
            }
            tables = plan.tables(bounce.address(), MemoryKind.VRAM);
            memory.contexts().makeCurrent(0);
            CudaCheck.check(cuEventCreate(start, 0), "cuEventCreate");
            CudaCheck.check(cuEventCreate(stop, 0), "cuEventCreate");
            CudaCheck.check(cuEventCreate(joined, 0), "cuEventCreate");
            second = new CUstream();
            CudaCheck.check(cuStreamCreate(second, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        }

        /** Poisons the destination, unpacks once and compares every byte with the CPU reference. */
        void verify(CudaScatterGather u) {
            memory.contexts().makeCurrent(0);
            CudaCheck.check(cuMemsetD8(Addresses.device(dst.address()), (byte) 0xA5, dst.length()), "cuMemsetD8");
            long ticket = addAll(u);
            while (!u.isDone(ticket)) {
                Thread.onSpinWait();
            }
            long got = NativeMemory.allocate(dst.length(), 4096);
            try {
                memory.copy(MemoryDescriptor.dram(got, dst.length()), dst);
                byte[] a = new byte[1 << 24];
                byte[] b = new byte[1 << 24];
                for (long off = 0; off < dst.length(); off += a.length) {
                    int n = (int) Math.min(a.length, dst.length() - off);
                    NativeMemory.get(expected + off, a, 0, n);
                    NativeMemory.get(got + off, b, 0, n);
                    int m = Arrays.mismatch(a, 0, n, b, 0, n);
                    if (m >= 0) {
                        throw new AssertionError("unpack differs from the CPU reference at byte " + (off + m));
                    }
                }
            } finally {
                NativeMemory.free(got);
            }
        }

        private long addAll(CudaScatterGather u) {
            List<NetRequest> requests = tables.requests();
            for (int r = 0; r < requests.size(); r++) {
                u.add(requests.get(r), dst.address() + plan.receives().get(r).destinationOffset(), MemoryKind.VRAM);
            }
            return u.submit();
        }

        /** One table row: {@code u}'s kernel (as last launched) measured on this case. */
        String row(String name, String label, CudaScatterGather u, TunedKernel k, boolean deviceRecords, double memcpy) {
            double[] r = unpack(u, k);
            String kernel = label + " (" + u.kernelRegisters() + " regs; " + k.lastDeal() + ")";
            return String.format("| %s | %d | %s | %s | %.0f | %.0f | %.3f | %.0f | %.3f | %.0f | %.1f |", name,
                    plan.fragmentCount(), kernel, deviceRecords ? "VRAM copy" : "host-mapped", memcpy, r[2], r[2] / memcpy,
                    r[0], r[0] / memcpy, r[1], r[1] * 1000 / plan.fragmentCount());
        }

        /** Median GB/s of the kernel and median host µs per launch. */
        double[] unpack(CudaScatterGather u, TunedKernel k) {
            double[] gbps = new double[iters];
            double[] hostMicros = new double[iters];
            for (int i = 0; i < warmup + iters; i++) {
                memory.contexts().makeCurrent(0);
                for (CUstream s : k.streams()) {
                    CudaCheck.check(cuStreamSynchronize(s), "cuStreamSynchronize");
                }
                CUstream stream = u.stream(); // this batch's
                long t0 = System.nanoTime();
                List<NetRequest> requests = tables.requests();
                for (int r = 0; r < requests.size(); r++) {
                    u.add(requests.get(r), dst.address() + plan.receives().get(r).destinationOffset(), MemoryKind.VRAM);
                }
                long t1 = System.nanoTime();
                // Recorded after the work list is built: the interval holds the launch and the kernel.
                CudaCheck.check(cuEventRecord(start, stream), "cuEventRecord");
                long t2 = System.nanoTime();
                long ticket = u.submit();
                long t3 = System.nanoTime();
                CudaCheck.check(cuEventRecord(stop, stream), "cuEventRecord");
                CudaCheck.check(cuEventSynchronize(stop), "cuEventSynchronize");
                if (!u.isDone(ticket)) {
                    throw new AssertionError("ticket not done after its stream drained");
                }
                if (i >= warmup) {
                    gbps[i - warmup] = plan.payloadBytes() / (elapsedMillis() * 1e6);
                    hostMicros[i - warmup] = ((t1 - t0) + (t3 - t2)) / 1e3;
                }
            }
            // The same launch again and again with no host work in between: the GPU stays busy (and
            // at its clocks), as when receives arrive faster than one batch takes.
            double[] replay = new double[iters];
            CUstream[] turns = k.streams();
            for (int i = 0; i < warmup + iters; i++) {
                begin(turns);
                k.replayLast(REPEAT);
                end(turns);
                if (i >= warmup) {
                    replay[i - warmup] = REPEAT * plan.payloadBytes() / (elapsedMillis() * 1e6);
                }
            }
            return new double[] {median(gbps), median(hostMicros), median(replay)};
        }

        /** Median GB/s of contiguous device-to-device copies of the same payload, back to back. */
        double memcpyGbps() {
            memory.contexts().makeCurrent(0);
            CUstream stream = memory.contexts().stream(0);
            double[] gbps = new double[iters];
            long n = plan.payloadBytes();
            CUstream[] turns = {stream, second};
            for (int i = 0; i < warmup + iters; i++) {
                begin(turns);
                for (int k = 0; k < REPEAT; k++) {
                    CudaCheck.check(cuMemcpyAsync(Addresses.device(dst.address()), Addresses.device(bounce.address()), n,
                            turns[k % turns.length]), "cuMemcpyAsync");
                }
                end(turns);
                if (i >= warmup) {
                    gbps[i - warmup] = REPEAT * n / (elapsedMillis() * 1e6);
                }
            }
            return median(gbps);
        }

        /** Records the start on the first of {@code turns}; the others start after it. */
        private void begin(CUstream[] turns) {
            CudaCheck.check(cuEventRecord(start, turns[0]), "cuEventRecord");
            for (int k = 1; k < turns.length; k++) {
                CudaCheck.check(cuStreamWaitEvent(turns[k], start, 0), "cuStreamWaitEvent");
            }
        }

        /** Records the stop on the first of {@code turns} after the others' work too, and waits for it. */
        private void end(CUstream[] turns) {
            for (int k = 1; k < turns.length; k++) {
                CudaCheck.check(cuEventRecord(joined, turns[k]), "cuEventRecord");
                CudaCheck.check(cuStreamWaitEvent(turns[0], joined, 0), "cuStreamWaitEvent");
            }
            CudaCheck.check(cuEventRecord(stop, turns[0]), "cuEventRecord");
            CudaCheck.check(cuEventSynchronize(stop), "cuEventSynchronize");
        }

        private double elapsedMillis() {
            float[] ms = {0};
            CudaCheck.check(cuEventElapsedTime(ms, start, stop), "cuEventElapsedTime");
            return ms[0];
        }

        void close() {
            memory.contexts().makeCurrent(0);
            cuEventDestroy(joined);
            cuStreamDestroy(second);
            cuEventDestroy(start);
            cuEventDestroy(stop);
            tables.close();
            memory.free(bounce);
            memory.free(dst);
            NativeMemory.free(hostBounce);
            NativeMemory.free(expected);
        }
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private void line(String s) {
        System.out.println(s);
        report.append(s).append('\n');
    }
}
