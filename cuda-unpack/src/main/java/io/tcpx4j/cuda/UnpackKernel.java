package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import jcuda.Pointer;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static jcuda.driver.JCudaDriver.cuFuncGetAttribute;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuModuleGetGlobal;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

/**
 * The unpack kernel loaded into one GPU's primary context: PTX from the classpath, compiled by the
 * driver's JIT (which caches the result in {@code ~/.nv/ComputeCache}), and the grid size that keeps
 * every block resident at once (the kernel loops over its records, so more blocks would only queue).
 *
 * <p>How a launch is dealt ({@link #unitFor}, {@link #blockThreads}, {@link #gridFor}) and the launch
 * itself ({@link #launch}) are overridable, so that tests and benchmarks can fix the deal and record
 * launches without hooks in the scatter-gather.
 *
 * <p><b>Not thread-safe</b>: owned by one {@link CudaScatterGather}.
 */
class UnpackKernel implements AutoCloseable {

    /** The shipped PTX, built from src/main/cuda/unpack.cu by gen-ptx.sh ({@code .target sm_80}). */
    static final String RESOURCE = "unpack.ptx";
    static final String ENTRY = "tcpx4j_unpack";
    /** Threads per block for kernels that do not export {@link #BLOCK_GLOBAL}. */
    static final int BLOCK = 256;
    /** Exported by kernels built for another block size (unpack.cu's BLOCK_THREADS). */
    static final String BLOCK_GLOBAL = "tcpx4j_block_threads";
    /** Exported by kernels that take units of consecutive records (unpack.cu): their largest unit. */
    static final String UNIT_GLOBAL = "tcpx4j_records_per_warp";
    /**
     * Payload per unit the host aims at: one warp's share of a launch. Small units even out the
     * load across the GPU (the launch ends when its slowest block does); below about two pages a
     * warp no longer overlaps one page's stores with the next one's loads (docs/PERFORMANCE.md,
     * "cuda-unpack").
     */
    static final int UNIT_BYTES = 8 * 1024;

    private final CUmodule module = new CUmodule();
    private final DirectDriver.Function function = new DirectDriver.Function();
    private final int sms;
    private int blockThreads = BLOCK;
    private int maxBlocks;
    private final int registers;
    /**
     * Largest unit of consecutive records per warp of a load-balanced kernel (one that exports
     * {@link #UNIT_GLOBAL}), or 0 for a kernel that wants a resident grid.
     */
    private final int maxUnit;
    /** Warps resident at once on the GPU. */
    private int residentWarps;
    private boolean loaded;

    /** Loads {@code ptx} (null-terminated or not) into the current context of {@code device}. */
    UnpackKernel(Contexts contexts, int device, byte[] ptx) {
        contexts.makeCurrent(device);
        byte[] image = ptx.length > 0 && ptx[ptx.length - 1] == 0 ? ptx : Arrays.copyOf(ptx, ptx.length + 1);
        int result = cuModuleLoadData(module, image);
        if (result != 0) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED, "the driver (CUDA "
                    + Cuda.driverVersion() + ") cannot load the unpack kernel's PTX: "
                    + CudaCheck.failure(result, "cuModuleLoadData").getMessage());
        }
        loaded = true;
        try {
            CudaCheck.check(cuModuleGetFunction(function, module, ENTRY), "cuModuleGetFunction(" + ENTRY + ")");
            int[] value = {0};
            sms = contexts.attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
            int declared = readU32Global(BLOCK_GLOBAL, BLOCK);
            if (declared < 32 || declared > 1024 || declared % 32 != 0) {
                throw new TransferException(TransferException.Code.BACKEND, BLOCK_GLOBAL + " = " + declared);
            }
            sizeBlocks(declared);
            CudaCheck.check(cuFuncGetAttribute(value, CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, function),
                    "cuFuncGetAttribute");
            registers = value[0];
            maxUnit = readUnitGlobal();
        } catch (TransferException e) {
            close();
            throw e;
        }
    }

    /** The shipped PTX for every GPU ({@code .target sm_80}). */
    static byte[] shippedPtx() {
        byte[] ptx = resource(RESOURCE);
        if (ptx == null) {
            throw new IllegalStateException(RESOURCE + " is missing from the classpath");
        }
        return ptx;
    }

    /** A PTX resource beside this class, or null. */
    static byte[] resource(String name) {
        try (InputStream in = UnpackKernel.class.getResourceAsStream(name)) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Loads the shipped kernel into {@code device}'s context. */
    static UnpackKernel shipped(Contexts contexts, int device) {
        return new UnpackKernel(contexts, device, shippedPtx());
    }

    /** The PTX's {@code .version} line, for messages. */
    static String ptxVersion(byte[] ptx) {
        for (String line : new String(ptx, StandardCharsets.US_ASCII).split("\n")) {
            if (line.startsWith(".version")) {
                return line.trim();
            }
        }
        return "no .version";
    }

    /** Blocks that fit on the GPU at once. */
    int maxBlocks() {
        return maxBlocks;
    }

    /** The kernel's entry function. */
    DirectDriver.Function function() {
        return function;
    }

    /** Threads per block of every launch: the kernel's own block size. */
    int blockThreads() {
        return blockThreads;
    }

    /** The largest unit the kernel takes ({@link #UNIT_GLOBAL}), or 0 for a kernel without units. */
    int maxUnit() {
        return maxUnit;
    }

    /**
     * Launches the kernel with the given deal on {@code stream}. {@code params} is the parameter list as
     * JCuda's cuLaunchKernel takes it, {@code nativeParams} the same list in native memory (an array of
     * pointers to the values), or 0 ({@link DirectDriver#launch}).
     */
    void launch(int grid, int block, CUstream stream, Pointer params, long nativeParams) {
        CudaCheck.check(DirectDriver.launch(function, grid, block, stream, params, nativeParams),
                "cuLaunchKernel(" + ENTRY + ")");
    }

    private void sizeBlocks(int threads) {
        int[] value = {0};
        CudaCheck.check(cuOccupancyMaxActiveBlocksPerMultiprocessor(value, function, threads, 0),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        blockThreads = threads;
        maxBlocks = Math.max(1, value[0]) * sms;
        residentWarps = maxBlocks * (threads / 32);
    }

    /** Registers per thread after JIT. */
    int registers() {
        return registers;
    }

    /**
     * Records per unit (the launch's 4th parameter) for {@code records} records of {@code bytes}
     * bytes in all ({@link #unitSize}); 1 for kernels without units (which ignore it).
     */
    int unitFor(int records, long bytes) {
        if (maxUnit == 0) {
            return 1;
        }
        return unitSize(records, bytes, residentWarps, maxUnit);
    }

    /**
     * Records per warp: about {@link #UNIT_BYTES} of payload (two 4 KiB pages, eight 1 KiB
     * fragments), fewer where that would leave resident warps without a unit, at least 1 and at most
     * {@code maxUnit}.
     */
    static int unitSize(int records, long bytes, int residentWarps, int maxUnit) {
        long bySize = bytes <= 0 ? 1 : Math.round((double) UNIT_BYTES * records / bytes);
        long unit = Math.min(bySize, records / Math.max(1, residentWarps));
        return (int) Math.max(1, Math.min(maxUnit, unit));
    }

    /**
     * Blocks for a launch with {@code units} units (records, for kernels without units): one warp
     * per unit; for kernels without units, at most a resident grid.
     */
    int gridFor(long units) {
        int warpsPerBlock = blockThreads() / 32;
        long blocks = (units + warpsPerBlock - 1) / warpsPerBlock;
        return (int) Math.max(1, Math.min(blocks, maxUnit == 0 ? maxBlocks : Integer.MAX_VALUE));
    }

    /** The kernel's {@link #UNIT_GLOBAL} (1..32), or 0 when it has none. */
    private int readUnitGlobal() {
        int value = readU32Global(UNIT_GLOBAL, 0);
        if (value != 0 && (value < 1 || value > 32)) {
            throw new TransferException(TransferException.Code.BACKEND, UNIT_GLOBAL + " = " + value + ", not 1..32");
        }
        return value;
    }

    /** A 32-bit global of the module, or {@code absent} when it has none. */
    private int readU32Global(String name, int absent) {
        CUdeviceptr address = new CUdeviceptr();
        long[] size = {0};
        int result = cuModuleGetGlobal(address, size, module, name);
        if (result == CUresult.CUDA_ERROR_NOT_FOUND) {
            return absent;
        }
        CudaCheck.check(result, "cuModuleGetGlobal(" + name + ")");
        if (size[0] != Integer.BYTES) {
            throw new TransferException(TransferException.Code.BACKEND, name + " has " + size[0] + " bytes");
        }
        int[] value = {0};
        CudaCheck.check(cuMemcpyDtoH(Pointer.to(value), address, Integer.BYTES), "cuMemcpyDtoH(" + name + ")");
        return value[0];
    }

    @Override
    public void close() {
        if (loaded) {
            loaded = false;
            cuModuleUnload(module);
        }
    }
}
