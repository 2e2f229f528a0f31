package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static jcuda.driver.JCudaDriver.cuFuncGetAttribute;
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

    /** The shipped PTX, built from src/main/cuda/unpack.cu by gen-ptx.sh. */
    static final String RESOURCE = "unpack.ptx";
    static final String ENTRY = "tcpx4j_unpack";
    static final int BLOCK = 256;
    static final int WARPS_PER_BLOCK = BLOCK / 32;

    private final CUmodule module = new CUmodule();
    private final CUfunction function = new CUfunction();
    private final int maxBlocks;
    private final int registers;
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
        } catch (TransferException e) {
            close();
            throw e;
        }
    }

    /** The PTX shipped in this jar. */
    static byte[] shippedPtx() {
        try (InputStream in = UnpackKernel.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the classpath");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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

    /** Blocks for {@code records} records: one warp per record up to a full, resident grid. */
    int gridFor(int records) {
        int blocks = (records + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
        return Math.max(1, Math.min(blocks, maxBlocks));
    }

    @Override
    public void close() {
        if (loaded) {
            loaded = false;
            cuModuleUnload(module);
        }
    }
}
