package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import jcuda.driver.JCudaDriver;

import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;

/**
 * Whether CUDA is usable here: the probe really loads JCuda's native library (which links
 * {@code libcuda.so.1}), calls {@code cuInit} and counts devices. It runs once per process, on the
 * first call of any method; the first failure is kept as {@link #unavailabilityCause()}.
 *
 * <p>Library lookup: JCuda extracts {@code libJCudaDriver-12.0.0-linux-x86_64.so} from the
 * {@code jcuda-natives} jar into {@code java.io.tmpdir}; that library loads {@code libcuda.so.1}
 * through the dynamic linker ({@code LD_LIBRARY_PATH}, then the system paths), which the NVIDIA
 * driver installs.
 *
 * <p>Thread-safe.
 */
public final class Cuda {

    private static final class Probe {
        static final Throwable CAUSE = probe();
        static final int DEVICES = CAUSE == null ? countDevices() : 0;
        static final int DRIVER_VERSION = CAUSE == null ? queryDriverVersion() : 0;
    }

    private Cuda() {
    }

    /** Whether the CUDA driver initialised and sees at least one GPU. */
    public static boolean isAvailable() {
        return Probe.CAUSE == null;
    }

    /** Why CUDA is not usable, or {@code null} when it is. */
    public static Throwable unavailabilityCause() {
        return Probe.CAUSE;
    }

    /** Throws a {@link TransferException} ({@code NOT_SUPPORTED}) that says why, unless available. */
    public static void ensureAvailable() {
        Throwable cause = Probe.CAUSE;
        if (cause != null) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "CUDA is not usable here (" + cause + "); cuda-unpack needs an NVIDIA driver "
                            + "(libcuda.so.1 on the library path, R535 or newer) and a GPU, or leave out "
                            + "CudaUnpackModule on machines without one", cause);
        }
    }

    /** GPUs the driver reports; 0 when unavailable. */
    public static int deviceCount() {
        return Probe.DEVICES;
    }

    /** The driver's CUDA version as {@code 1000 * major + 10 * minor} (12020 is 12.2); 0 when unavailable. */
    public static int driverVersion() {
        return Probe.DRIVER_VERSION;
    }

    private static Throwable probe() {
        try {
            JCudaDriver.setExceptionsEnabled(false);
            CudaCheck.check(cuInit(0), "cuInit");
            int[] count = {0};
            CudaCheck.check(cuDeviceGetCount(count), "cuDeviceGetCount");
            if (count[0] < 1) {
                return new IllegalStateException("the CUDA driver reports no GPU");
            }
            return null;
        } catch (LinkageError | RuntimeException e) {
            // UnsatisfiedLinkError without libcuda.so.1; JCuda wraps some load failures in
            // CudaException (a RuntimeException).
            return e;
        }
    }

    private static int countDevices() {
        int[] count = {0};
        CudaCheck.check(cuDeviceGetCount(count), "cuDeviceGetCount");
        return count[0];
    }

    private static int queryDriverVersion() {
        int[] version = {0};
        CudaCheck.check(cuDriverGetVersion(version), "cuDriverGetVersion");
        return version[0];
    }
}
