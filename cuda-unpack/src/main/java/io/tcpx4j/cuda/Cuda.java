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
 * {@code jcuda-natives} jar into {@code java.io.tmpdir} and never removes it; the probe points
 * {@code java.io.tmpdir} at a directory of its own while JCuda loads, and deletes that directory once
 * the library is loaded (or failed to load), so that nothing is left behind. The library loads
 * {@code libcuda.so.1} through the dynamic linker ({@code LD_LIBRARY_PATH}, then the system paths),
 * which the NVIDIA driver installs.
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
            loadJCuda();
            CudaCheck.check(cuInit(0), "cuInit");
            int[] count = {0};
            CudaCheck.check(cuDeviceGetCount(count), "cuDeviceGetCount");
            if (count[0] < 1) {
                return new IllegalStateException("the CUDA driver reports no GPU");
            }
            return null;
        } catch (LinkageError | RuntimeException | java.io.IOException e) {
            // UnsatisfiedLinkError without libcuda.so.1; JCuda wraps some load failures in
            // CudaException (a RuntimeException).
            return e;
        }
    }

    /**
     * Loads JCuda's driver library (the first use of {@link JCudaDriver} does) with
     * {@code java.io.tmpdir} set to a fresh directory, then restores the property and deletes the
     * directory: the loaded library stays mapped, and the extracted file is not left in the shared
     * temporary directory. Other threads that read the property in that window see the fresh
     * directory, which is only less tidy for them.
     */
    private static synchronized void loadJCuda() throws java.io.IOException {
        String tmpdir = System.getProperty("java.io.tmpdir");
        java.nio.file.Path own = java.nio.file.Files.createTempDirectory("tcpx4j-jcuda-");
        System.setProperty("java.io.tmpdir", own.toString());
        try {
            JCudaDriver.setExceptionsEnabled(false);
        } finally {
            System.setProperty("java.io.tmpdir", tmpdir);
            deleteTree(own);
        }
    }

    private static void deleteTree(java.nio.file.Path dir) {
        try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            // what is left stays in the temporary directory; the probe's answer does not depend on it
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
