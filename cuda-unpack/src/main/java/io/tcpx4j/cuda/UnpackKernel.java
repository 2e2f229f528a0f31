package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import jcuda.Pointer;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;

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
 * <p><b>Not thread-safe</b>: owned by one {@link CudaUnpacker}.
 */
final class UnpackKernel implements AutoCloseable {

    /** The shipped PTX, built from src/main/cuda/unpack.cu by gen-ptx.sh ({@code .target sm_80}). */
    static final String RESOURCE = "unpack.ptx";
    /**
     * An optional second PTX for compute capability 9.0 and newer ({@code .target sm_90}, Hopper's
     * bulk copy engine), built by {@code ARCH=90 gen-ptx.sh}; where it is absent, or the driver
     * refuses it, every GPU gets {@link #RESOURCE}.
     */
    static final String RESOURCE_SM90 = "unpack-sm90.ptx";
    static final String ENTRY = "tcpx4j_unpack";
    static final int BLOCK = 256;
    static final int WARPS_PER_BLOCK = BLOCK / 32;
    /** Exported by kernels that balance by grid size (unpack.cu, DEAL == 2): their largest unit. */
    static final String UNIT_GLOBAL = "tcpx4j_records_per_warp";
    /** Units per resident warp the grid aims at, so that the block scheduler can even out the load. */
    static final int UNITS_PER_WARP = 4;

    private final CUmodule module = new CUmodule();
    private final CUfunction function = new CUfunction();
    private final int maxBlocks;
    private final int registers;
    /**
     * Largest unit of consecutive records per warp of a load-balanced kernel (one that exports
     * {@link #UNIT_GLOBAL}), or 0 for a kernel that wants a resident grid.
     */
    private final int maxUnit;
    /** Warps resident at once on the GPU. */
    private final int residentWarps;
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
            CudaCheck.check(cuOccupancyMaxActiveBlocksPerMultiprocessor(value, function, BLOCK, 0),
                    "cuOccupancyMaxActiveBlocksPerMultiprocessor");
            int perSm = Math.max(1, value[0]);
            int sms = contexts.attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
            maxBlocks = perSm * sms;
            CudaCheck.check(cuFuncGetAttribute(value, CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, function),
                    "cuFuncGetAttribute");
            registers = value[0];
            residentWarps = maxBlocks * WARPS_PER_BLOCK;
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

    /**
     * The shipped PTX for a GPU of compute capability {@code major}.x: the sm_90 one where it ships
     * and {@code major >= 9}, else {@link #shippedPtx()}.
     */
    static byte[] shippedPtx(int major) {
        byte[] sm90 = major >= 9 ? resource(RESOURCE_SM90) : null;
        return sm90 != null ? sm90 : shippedPtx();
    }

    /** A PTX resource beside this class, or null. */
    static byte[] resource(String name) {
        try (InputStream in = UnpackKernel.class.getResourceAsStream(name)) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Loads the shipped kernel into {@code device}'s context: the sm_90 PTX on compute capability
     * 9.0 and newer where it ships, else (or if the driver cannot load it) the sm_80 one.
     */
    static UnpackKernel shipped(Contexts contexts, int device) {
        int major = contexts.attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        byte[] sm90 = major >= 9 ? resource(RESOURCE_SM90) : null;
        if (sm90 != null) {
            try {
                return new UnpackKernel(contexts, device, sm90);
            } catch (TransferException e) {
                if (e.code() != TransferException.Code.NOT_SUPPORTED) {
                    throw e;
                }
            }
        }
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

    CUfunction function() {
        return function;
    }

    /** Blocks that fit on the GPU at once. */
    int maxBlocks() {
        return maxBlocks;
    }

    /** Registers per thread after JIT. */
    int registers() {
        return registers;
    }

    /**
     * Records per warp (the launch's 4th parameter): for a load-balanced kernel, enough that the
     * grid holds about {@link #UNITS_PER_WARP} units per resident warp, at most its largest unit;
     * 1 otherwise (ignored by such kernels).
     */
    int unitFor(int records) {
        if (maxUnit == 0) {
            return 1;
        }
        long unit = records / ((long) residentWarps * UNITS_PER_WARP);
        return (int) Math.max(1, Math.min(maxUnit, unit));
    }

    /**
     * Blocks for {@code records} records: for a load-balanced kernel, one warp per unit of
     * {@link #unitFor} records; otherwise one warp per record up to a full, resident grid.
     */
    int gridFor(int records) {
        long warps = maxUnit == 0 ? records : (records + (long) unitFor(records) - 1) / unitFor(records);
        long blocks = (warps + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
        return (int) Math.max(1, Math.min(blocks, maxUnit == 0 ? maxBlocks : Integer.MAX_VALUE));
    }

    /** The kernel's {@link #UNIT_GLOBAL}, or 0 when it has none. */
    private int readUnitGlobal() {
        CUdeviceptr address = new CUdeviceptr();
        long[] size = {0};
        int result = cuModuleGetGlobal(address, size, module, UNIT_GLOBAL);
        if (result == CUresult.CUDA_ERROR_NOT_FOUND) {
            return 0;
        }
        CudaCheck.check(result, "cuModuleGetGlobal(" + UNIT_GLOBAL + ")");
        if (size[0] != Integer.BYTES) {
            throw new TransferException(TransferException.Code.BACKEND, UNIT_GLOBAL + " has " + size[0] + " bytes");
        }
        int[] value = {0};
        CudaCheck.check(cuMemcpyDtoH(Pointer.to(value), address, Integer.BYTES), "cuMemcpyDtoH(" + UNIT_GLOBAL + ")");
        if (value[0] < 1 || value[0] > 32) {
            throw new TransferException(TransferException.Code.BACKEND, UNIT_GLOBAL + " = " + value[0] + ", not 1..32");
        }
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
