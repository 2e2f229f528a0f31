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
 * const char* fmt, ...)}. The callback declares only the fixed prefix. On the SysV x86-64 and AAPCS64
 * (Linux) calling conventions a variadic call passes the named arguments exactly like a call with a
 * fixed prototype, so the prefix is read correctly and the extra arguments are ignored. We never try
 * to format the C arguments (that would need the va_list): we log the format string and file:line.
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
    private final long[] siteKey = new long[SITES];
    private final int[] siteCount = new int[SITES];
    private final long[] siteWindowStart = new long[SITES];
    private final int[] siteSuppressed = new int[SITES];
    private long totalSuppressed;

    PluginLogger(System.Logger logger) {
        this.logger = logger;
        // Plugin threads stay attached (as daemons) instead of attach/detach per log line.
        Native.setCallbackThreadInitializer(this, new CallbackThreadInitializer(true, false, "tcpx-plugin"));
    }

    PluginLogger() {
        this(System.getLogger(LOGGER_NAME));
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

    /** The callback: the variadic logger's fixed prefix. */
    @Override
    public void invoke(int ncclLevel, long flags, Pointer file, int line, Pointer fmt) {
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
            String text = fmt == null ? "" : fmt.getString(0);
            if (suppressedBefore > 0) {
                logger.log(level, "[{0}] {1} (format string; {2} similar lines suppressed)", where, text,
                        suppressedBefore);
            } else {
                logger.log(level, "[{0}] {1} (format string)", where, text);
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
