package io.tcpx4j.cuda;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;

/**
 * The kernel launch, bound straight to {@code libcuda.so.1} through JNA direct mapping: its arguments
 * are primitives (handles and the parameter list's native address). JCuda walks a launch's parameter
 * {@code Pointer} through JNI on every call, which doubles the host time of a launch; a scatter-gather
 * launches once per batch of receives. Calls with plain arguments (copies, events) stay on JCuda, whose
 * JNI is cheaper for them than a JNA call (both measured by CallPathBench, docs/PERFORMANCE.md,
 * "cuda-unpack").
 *
 * <p>The handles must come from the subclasses here (JCuda exposes a handle's value to subclasses
 * only). Where JNA cannot bind the driver, or a handle is a plain JCuda object, the launch goes
 * through JCuda instead.
 *
 * <p>Thread-safe.
 */
final class DirectDriver {

    private static final boolean BOUND = bind();

    private DirectDriver() {
    }

    /** Whether launches can go straight to the driver (else they go through JCuda). */
    static boolean available() {
        return BOUND;
    }

    /** Launches {@code function} on a 1-D grid; {@code nativeParams} is {@code params} in native memory, or 0. */
    static int launch(Function function, int grid, int block, CUstream stream, Pointer params, long nativeParams) {
        return BOUND && nativeParams != 0 && stream instanceof Stream s
                ? Calls.cuLaunchKernel(function.handle(), grid, 1, 1, block, 1, 1, 0, s.handle(), nativeParams, 0)
                : cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, stream, params, null);
    }

    private static boolean bind() {
        try {
            Native.register(Calls.class, NativeLibrary.getInstance("libcuda.so.1"));
            return true;
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            System.getLogger(DirectDriver.class.getName()).log(System.Logger.Level.DEBUG,
                    "libcuda.so.1 not bound through JNA; kernels launch through JCuda: {0}", e.toString());
            return false;
        }
    }

    /** The driver's entry points, by their exported names. */
    private static final class Calls {
        static native int cuLaunchKernel(long function, int gridX, int gridY, int gridZ, int blockX, int blockY,
                                         int blockZ, int sharedMemBytes, long stream, long kernelParams, long extra);
    }

    /** A kernel function whose driver handle can be read. */
    static final class Function extends CUfunction {
        long handle() {
            return getNativePointer();
        }
    }

    /** A stream whose driver handle can be read. */
    static final class Stream extends CUstream {
        long handle() {
            return getNativePointer();
        }
    }
}
