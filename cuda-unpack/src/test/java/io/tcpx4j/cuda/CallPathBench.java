package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.NativeMemory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

import java.util.Arrays;
import java.util.function.IntSupplier;

import static jcuda.driver.JCudaDriver.cuEventQuery;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemcpyAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * Host time per driver call on the unpacker's per-batch path, in the same run on GPU 0: the kernel
 * launch straight to the driver ({@link DirectDriver}) against JCuda's, and, for the calls that stay on
 * JCuda (a copy, an event record and query), JCuda against JNA direct mapping; then the host
 * time to add and submit one 64 KiB receive (16 permuted 4 KiB pages, one batch each) through
 * {@link CudaScatterGather}, the cost an engine pays per chunk that completes on its own. Test scope, run
 * from the module's test classes like {@link UnpackBench} ({@code scripts/device/run.sh}, stage
 * {@code callpath}).
 *
 * <pre>
 * java -cp ... io.tcpx4j.cuda.CallPathBench [--calls 200] [--rounds 41]
 * </pre>
 *
 * Each round makes {@code --calls} calls of one kind back to back, then waits for the stream (not
 * timed); kinds take turns round by round, and the table shows the median and the spread of the rounds.
 */
public final class CallPathBench {

    private CallPathBench() {
    }

    public static void main(String[] args) {
        int calls = 200;
        int rounds = 41;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--calls" -> calls = Integer.parseInt(args[i + 1]);
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (!Cuda.isAvailable()) {
            System.err.println("CallPathBench: no usable GPU");
            System.exit(2);
        }
        try (CudaDeviceMemory memory = new CudaDeviceMemory()) {
            run(memory, calls, rounds);
        }
    }

    private static void run(CudaDeviceMemory memory, int calls, int rounds) {
        Contexts contexts = memory.contexts();
        contexts.makeCurrent(0);
        CUstream direct = new DirectDriver.Stream();
        CUstream plain = new CUstream();
        CudaCheck.check(cuStreamCreate(direct, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        CudaCheck.check(cuStreamCreate(plain, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        UnpackKernel kernel = UnpackKernel.shipped(contexts, 0);
        MemoryDescriptor table = memory.allocatePinned(WorkList.bytesFor(16));
        MemoryDescriptor vram = memory.allocate(MemoryKind.VRAM, 1 << 20, 0);
        MemoryDescriptor host = memory.allocatePinned(1 << 20);
        // An empty work list: the kernel reads its count (0) and returns, so a launch costs what the host pays.
        int[] count = {0};
        int[] unit = {1};
        Pointer params = Pointer.to(Pointer.to(new long[] {table.address()}), Pointer.to(new int[] {16}),
                Pointer.to(count), Pointer.to(unit));
        long nativeParams = Launcher.nativeParameters(table.address(), 16);
        int block = kernel.blockThreads();
        Event event = new Event();
        CudaCheck.check(jcuda.driver.JCudaDriver.cuEventCreate(event, 2 /* CU_EVENT_DISABLE_TIMING */), "cuEventCreate");

        String[] names = {
            "cuLaunchKernel, direct", "cuLaunchKernel, JCuda",
            "cuMemcpyAsync 4 KiB D2H, JNA direct mapping", "cuMemcpyAsync 4 KiB D2H, JCuda",
            "cuEventRecord + cuEventQuery, JNA direct mapping", "cuEventRecord + cuEventQuery, JCuda",
        };
        long stream = ((DirectDriver.Stream) direct).handle();
        IntSupplier[] ops = {
            () -> DirectDriver.launch(kernel.function(), 1, block, direct, params, nativeParams),
            () -> DirectDriver.launch(kernel.function(), 1, block, plain, params, 0),
            () -> JnaCalls.cuMemcpyAsync(host.address(), vram.address(), 4096, stream),
            () -> cuMemcpyAsync(Addresses.device(host.address()), Addresses.device(vram.address()), 4096, plain),
            () -> recordAndQuery(JnaCalls.cuEventRecord(event.handle(), stream), JnaCalls.cuEventQuery(event.handle())),
            () -> recordAndQuery(cuEventRecord(event, plain), cuEventQuery(event)),
        };
        CUstream[] streams = {direct, plain, direct, plain, direct, plain};
        double[][] nanos = new double[ops.length][rounds];
        for (int warm = 0; warm < 5; warm++) {
            for (int k = 0; k < ops.length; k++) {
                time(ops[k], calls, streams[k]);
            }
        }
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < ops.length; k++) {
                nanos[k][r] = time(ops[k], calls, streams[k]);
            }
        }
        System.out.printf("CallPathBench: GPU 0, driver calls bound directly: %s, %d calls per round, %d rounds%n",
                DirectDriver.available(), calls, rounds);
        System.out.println("| call | median ns | min–max ns |");
        System.out.println("| --- | --- | --- |");
        for (int k = 0; k < ops.length; k++) {
            double[] s = nanos[k].clone();
            Arrays.sort(s);
            System.out.printf("| %s | %.0f | %.0f–%.0f |%n", names[k], s[rounds / 2], s[0], s[rounds - 1]);
        }
        unpackPerChunk(memory, host, vram, rounds);

        NativeMemory.free(nativeParams);
        jcuda.driver.JCudaDriver.cuEventDestroy(event);
        kernel.close();
        cuStreamDestroy(direct);
        cuStreamDestroy(plain);
        memory.free(table);
        memory.free(vram);
        memory.free(host);
    }

    /** Host ns per add + submit of one 64 KiB receive through the unpacker (its own batch each). */
    private static void unpackPerChunk(CudaDeviceMemory memory, MemoryDescriptor bounce, MemoryDescriptor vram,
                                       int rounds) {
        int chunk = 64 << 10;
        int pages = chunk / 4096;
        HostRequest[] requests = new HostRequest[(int) (bounce.length() / chunk)];
        for (int i = 0; i < requests.length; i++) {
            long[][] fragments = new long[pages][];
            for (int p = 0; p < pages; p++) {
                int q = (p * 7 + 3) % pages;
                fragments[p] = new long[] {(long) i * chunk + (long) q * 4096, 4096, (long) p * 4096};
            }
            requests[i] = new HostRequest(chunk, fragments, bounce.address(), bounce.length(), MemoryKind.DRAM);
        }
        double[] perChunk = new double[rounds];
        try (CudaScatterGather unpacker = new CudaScatterGather(memory, 0)) {
            for (int r = -5; r < rounds; r++) {
                long host = 0;
                long last = 0;
                for (int i = 0; i < requests.length; i++) {
                    long t0 = System.nanoTime();
                    unpacker.add(requests[i], vram.address() + (long) i * chunk, MemoryKind.VRAM);
                    last = unpacker.submit();
                    host += System.nanoTime() - t0;
                }
                while (!unpacker.isDone(last)) {
                    Thread.onSpinWait();
                }
                if (r >= 0) {
                    perChunk[r] = (double) host / requests.length;
                }
            }
        } finally {
            for (HostRequest h : requests) {
                h.close();
            }
        }
        Arrays.sort(perChunk);
        System.out.printf("| unpacker add + submit, one 64 KiB receive (16 pages) per batch | %.0f | %.0f–%.0f |%n",
                perChunk[rounds / 2], perChunk[0], perChunk[rounds - 1]);
    }

    /** Copy and event calls bound through JNA direct mapping, to compare with JCuda's. */
    private static final class JnaCalls {
        static {
            Native.register(JnaCalls.class, NativeLibrary.getInstance("libcuda.so.1"));
        }

        static native int cuMemcpyAsync(long destination, long source, long bytes, long stream);

        static native int cuEventRecord(long event, long stream);

        static native int cuEventQuery(long event);
    }

    /** An event whose driver handle can be read. */
    private static final class Event extends CUevent {
        long handle() {
            return getNativePointer();
        }
    }

    private static int recordAndQuery(int record, int query) {
        return record != CUresult.CUDA_SUCCESS ? record
                : query == CUresult.CUDA_ERROR_NOT_READY ? CUresult.CUDA_SUCCESS : query;
    }

    /** Mean ns per call over {@code calls} calls, then waits for the stream (not timed). */
    private static double time(IntSupplier op, int calls, CUstream stream) {
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            int result = op.getAsInt();
            if (result != CUresult.CUDA_SUCCESS) {
                throw CudaCheck.failure(result, "CallPathBench call");
            }
        }
        long elapsed = System.nanoTime() - t0;
        CudaCheck.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
        return (double) elapsed / calls;
    }
}
