package io.tcpx4j.transport.tcpx;

import com.sun.jna.Callback;
import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The plugin logger of this module's small C library ({@code src/main/native/pluginlog.c}, built by
 * the Maven build into the jar): a variadic {@code ncclDebugLogger_t} that formats each message with
 * its arguments (vsnprintf) and passes the finished line to one Java sink per process. Without the
 * library (a build without gcc) {@link #entry} answers null and callers log format strings instead.
 *
 * <p>Thread-safe.
 */
final class NativeLogFormat {

    static final String RESOURCE = "/io/tcpx4j/transport/tcpx/native/libtcpx4j-pluginlog.so";

    /** The sink's C type: {@code void (int level, unsigned long flags, const char* file, int line, const char* message)}. */
    interface Sink extends Callback {
        void invoke(int level, long flags, Pointer file, int line, Pointer message);
    }

    private static final Object LOCK = new Object();
    private static boolean probed;
    private static Function log;
    private static Function setSink;
    private static Throwable unavailable;
    /**
     * Every sink ever registered: the C library holds only the address of the latest, and a plugin
     * thread may still be calling a previous one, so none may be collected.
     */
    private static final List<Sink> SINKS = new ArrayList<>();

    private NativeLogFormat() {
    }

    /**
     * Makes {@code sink} the process's one sink and returns the C logger to hand to a plugin's init,
     * or null when the library is not available.
     */
    static Pointer entry(Sink sink) {
        synchronized (LOCK) {
            if (!bind()) {
                return null;
            }
            if (!SINKS.contains(sink)) {
                SINKS.add(sink);
            }
            setSink.invokeVoid(new Object[] {sink});
            return log;
        }
    }

    /** Why the library is not available, or null. */
    static Throwable unavailabilityCause() {
        synchronized (LOCK) {
            bind();
            return unavailable;
        }
    }

    private static boolean bind() {
        if (!probed) {
            probed = true;
            try {
                File f = Native.extractFromResourcePath(RESOURCE, NativeLogFormat.class.getClassLoader());
                NativeLibrary lib = NativeLibrary.getInstance(f.getAbsolutePath());
                log = lib.getFunction("tcpx4j_pluginlog");
                setSink = lib.getFunction("tcpx4j_pluginlog_set_sink");
            } catch (IOException | UnsatisfiedLinkError | RuntimeException e) {
                unavailable = e;
                log = null;
                setSink = null;
                System.getLogger(NativeLogFormat.class.getName()).log(System.Logger.Level.DEBUG,
                        "plugin log formatting unavailable, logging format strings: {0}", e.toString());
            }
        }
        return log != null;
    }
}
