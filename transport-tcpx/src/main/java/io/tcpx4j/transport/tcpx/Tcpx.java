package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.TransferException;

/**
 * Whether the TCPX net plugin can be used in this process, Netty style. The probe really finds and
 * opens the library, binds its ncclNet table and calls init (first in a child JVM, because TCPX's init
 * calls exit(1) when the CUDA driver cannot initialise), with {@link TcpxOptions#defaults()}. It runs
 * once, on first use; its answer is kept.
 *
 * <pre>{@code
 * assumeTrue(Tcpx.isAvailable(), () -> "TCPX: " + Tcpx.unavailabilityCause());
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class Tcpx {

    /**
     * Part of the error message when the plugin was found but its init ended the probe's child
     * process instead of returning (TCPX calls exit(1) when the CUDA driver cannot initialise).
     */
    public static final String INIT_ENDED_PROCESS = "the plugin's init ended the probe process";
    /** The name prefix of Google's GPUDirect-TCPX plugin (its table's name, e.g. GPUDirectTCPX_v7). */
    public static final String TCPX_PLUGIN_NAME = "GPUDirectTCPX";

    private static final Object LOCK = new Object();
    private static volatile boolean probed;
    private static volatile Throwable cause;

    private Tcpx() {
    }

    /**
     * How the per-chunk plugin calls are made: "JNI trampolines", or "JNA Function.invoke" with why the
     * trampoline library did not load (slower: an argument array and boxing per call).
     */
    public static String callPath() {
        Throwable why = NetCallTrampolines.unavailabilityCause();
        return why == null ? "JNI trampolines" : "JNA Function.invoke (trampolines unavailable: " + why + ")";
    }

    /** Whether the plugin loaded and initialised. */
    public static boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /**
     * Returns normally when the plugin is usable; otherwise throws a {@link TransferException}
     * (NOT_SUPPORTED when no usable library was found, BACKEND when its init failed) whose cause is
     * the first error and whose message says what to fix.
     */
    public static void ensureAvailable() {
        Throwable c = unavailabilityCause();
        if (c != null) {
            TransferException.Code code = c instanceof TransferException te ? te.code() : TransferException.Code.BACKEND;
            throw new TransferException(code, "TCPX is unavailable: " + c.getMessage(), c);
        }
    }

    /** Why the plugin is unusable (the first error, later ones suppressed), or null when it is usable. */
    public static Throwable unavailabilityCause() {
        if (!probed) {
            synchronized (LOCK) {
                if (!probed) {
                    cause = probe(TcpxOptions.defaults());
                    probed = true;
                }
            }
        }
        return cause;
    }

    /** One uncached probe with the given options: null when usable, else the error. */
    static Throwable probe(TcpxOptions options) {
        try {
            PluginLoader.load(options);
            return null;
        } catch (TransferException | LinkageError e) {
            return e;
        }
    }

    /** Tests only: forget the cached answer. */
    static void resetForTests() {
        synchronized (LOCK) {
            probed = false;
            cause = null;
        }
    }
}
