package io.tcpx4j.transport.tcpx;

import com.sun.jna.CallbackThreadInitializer;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.lang.System.Logger.Level;

/**
 * The {@code ncclDebugLogger_t} handed to the plugin's init, routed to the System.Logger
 * {@code io.tcpx4j.transport.tcpx.plugin}.
 *
 * <p>The C type is variadic: {@code void (int level, unsigned long flags, const char* file, int line,
 * const char* fmt, ...)}, and a Java callback cannot read C varargs. So the plugin gets the C logger
 * of {@link NativeLogFormat}, which formats each message with its arguments and calls
 * {@link #formattedSink()} with the finished line. When that library is missing, the plugin gets this
 * object itself, whose callback declares only the fixed prefix (on SysV x86-64 and AAPCS64 a variadic
 * call passes the named arguments like a fixed prototype) and logs the format string, marked so.
 *
 * <p>Rate limited per call site (file pointer, line): TCPX logs a WARN on every progress step of a
 * receive into host memory, which would otherwise flood the log. Each site logs its first
 * {@link #BURST} lines, then one line per {@link #WINDOW_NANOS} with the number suppressed.
 *
 * <p>Thread-safe: the plugin calls it from its own threads.
 */
final class PluginLogger implements NcclDebugLogger {

    static final String LOGGER_NAME = "io.tcpx4j.transport.tcpx.plugin";
    static final int BURST = 5;
    static final long WINDOW_NANOS = 10_000_000_000L;
    private static final int SITES = 256;

    private final System.Logger logger;
    private final boolean formatNatively;
    private final NativeLogFormat.Sink formatted = new NativeLogFormat.Sink() {
        @Override
        public void invoke(int level, long flags, Pointer file, int line, Pointer message) {
            line(level, file, line, message, true);
        }
    };
    private final long[] siteKey = new long[SITES];
    private final int[] siteCount = new int[SITES];
    private final long[] siteWindowStart = new long[SITES];
    private final int[] siteSuppressed = new int[SITES];
    private long totalSuppressed;

    /**
     * @param formatNatively hand plugins the formatting C logger when its library is available;
     *                       false always logs format strings
     */
    PluginLogger(System.Logger logger, boolean formatNatively) {
        this.logger = logger;
        this.formatNatively = formatNatively;
        // Plugin threads stay attached (as daemons) instead of attach/detach per log line.
        CallbackThreadInitializer daemon = new CallbackThreadInitializer(true, false, "tcpx-plugin");
        Native.setCallbackThreadInitializer(this, daemon);
        Native.setCallbackThreadInitializer(formatted, daemon);
    }

    PluginLogger(System.Logger logger) {
        this(logger, true);
    }

    PluginLogger() {
        this(System.getLogger(LOGGER_NAME));
    }

    /**
     * What to pass to the plugin's init: the formatting C logger (with this object's sink registered)
     * when available, else this callback. The plugin keeps it for the life of the process.
     */
    Object entryPoint() {
        if (formatNatively) {
            Pointer c = NativeLogFormat.entry(formatted);
            if (c != null) {
                return c;
            }
        }
        return this;
    }

    /** The sink the C logger calls with finished lines. */
    NativeLogFormat.Sink formattedSink() {
        return formatted;
    }

    /** NCCL_LOG_* to System.Logger levels: VERSION and INFO are chatty at init, so DEBUG. */
    static Level level(int ncclLevel) {
        return switch (ncclLevel) {
            case 1 -> Level.INFO;      // NCCL_LOG_VERSION
            case 2 -> Level.WARNING;   // NCCL_LOG_WARN
            case 3 -> Level.DEBUG;     // NCCL_LOG_INFO
            case 4 -> Level.ERROR;     // NCCL_LOG_ABORT
            case 5 -> Level.TRACE;     // NCCL_LOG_TRACE
            default -> Level.TRACE;
        };
    }

    /** The fallback callback: the variadic logger's fixed prefix; the arguments are not read. */
    @Override
    public void invoke(int ncclLevel, long flags, Pointer file, int line, Pointer fmt) {
        line(ncclLevel, file, line, fmt, false);
    }

    private void line(int ncclLevel, Pointer file, int line, Pointer text, boolean isFormatted) {
        try {
            Level level = level(ncclLevel);
            if (!logger.isLoggable(level)) {
                return;
            }
            long key = Pointer.nativeValue(file) * 31 + line;
            int suppressedBefore = admit(key);
            if (suppressedBefore < 0) {
                return;
            }
            String where = (file == null ? "?" : file.getString(0)) + ":" + line;
            String message = text == null ? "" : text.getString(0);
            String note = isFormatted ? "" : " (format string)";
            if (suppressedBefore > 0) {
                logger.log(level, "[{0}] {1}{2} ({3} similar lines suppressed)", where, message, note, suppressedBefore);
            } else {
                logger.log(level, "[{0}] {1}{2}", where, message, note);
            }
        } catch (Throwable t) {
            // Never let an exception unwind into the plugin's C frames.
        }
    }
    /** -1 to drop the line, else the number of lines of this site dropped since it last logged. */
    synchronized int admit(long key) {
        return admit(key, System.nanoTime());
    }

    synchronized int admit(long key, long now) {
        int i = (int) ((key ^ (key >>> 17)) & (SITES - 1));
        if (siteKey[i] != key || siteCount[i] == 0) {
            siteKey[i] = key;
            siteCount[i] = 1;
            siteWindowStart[i] = now;
            siteSuppressed[i] = 0;
            return 0;
        }
        if (siteCount[i] < BURST) {
            siteCount[i]++;
            return 0;
        }
        if (now - siteWindowStart[i] >= WINDOW_NANOS) {
            siteWindowStart[i] = now;
            int s = siteSuppressed[i];
            siteSuppressed[i] = 0;
            return s;
        }
        siteSuppressed[i]++;
        totalSuppressed++;
        return -1;
    }

    synchronized long suppressed() {
        return totalSuppressed;
    }
}
