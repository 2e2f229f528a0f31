package io.tcpx4j.transport.tcpx;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.NativeLibrary;

/**
 * The calling thread's current CUDA driver context, read and set through libcuda.so.1 when the
 * process has it, so that a plugin call made on a set-up thread sees the same CUDA device as the
 * caller would have (TCPX takes the device of the thread that calls connect). Without libcuda, or
 * before CUDA is initialised, there is no context and both methods do nothing.
 *
 * <p>Thread-safe.
 */
final class CudaDriverContext {

    private static final int CUDA_SUCCESS = 0;
    private static volatile Function getCurrent;
    private static volatile Function setCurrent;
    private static volatile boolean probed;

    private CudaDriverContext() {
    }

    /** The caller's current CUcontext, or 0 (none, no driver, or CUDA not initialised). */
    static long current() {
        if (!bind()) {
            return 0;
        }
        Memory ctx = new Memory(8);
        ctx.setLong(0, 0);
        return getCurrent.invokeInt(new Object[] {ctx}) == CUDA_SUCCESS ? ctx.getLong(0) : 0;
    }

    /** Makes {@code context} current on this thread; 0 does nothing. */
    static void makeCurrent(long context) {
        if (context != 0 && bind()) {
            setCurrent.invokeInt(new Object[] {context});
        }
    }

    private static boolean bind() {
        if (!probed) {
            synchronized (CudaDriverContext.class) {
                if (!probed) {
                    try {
                        NativeLibrary cuda = NativeLibrary.getInstance("libcuda.so.1");
                        getCurrent = cuda.getFunction("cuCtxGetCurrent");
                        setCurrent = cuda.getFunction("cuCtxSetCurrent");
                    } catch (UnsatisfiedLinkError | RuntimeException e) {
                        getCurrent = null;
                        setCurrent = null;
                    }
                    probed = true;
                }
            }
        }
        return getCurrent != null && setCurrent != null;
    }
}
