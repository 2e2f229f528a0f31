package io.tcpx4j.transport.tcpx;

import com.sun.jna.Callback;
import com.sun.jna.Pointer;

/**
 * The fixed prefix of {@code ncclDebugLogger_t}: {@code void (ncclDebugLogLevel level, unsigned long
 * flags, const char* file, int line, const char* fmt, ...)}. JNA callbacks are interfaces with a
 * single method; the variadic tail is deliberately not declared (see {@link PluginLogger}).
 */
interface NcclDebugLogger extends Callback {
    void invoke(int level, long flags, Pointer file, int line, Pointer fmt);
}
