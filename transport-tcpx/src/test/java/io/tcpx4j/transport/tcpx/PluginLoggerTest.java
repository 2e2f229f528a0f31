package io.tcpx4j.transport.tcpx;

import io.tcpx4j.domain.port.out.PtrType;
import org.junit.jupiter.api.Test;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

class PluginLoggerTest {

    /** Collects what would be logged. */
    static final class Recording implements System.Logger {
        final List<String> lines = new ArrayList<>();

        @Override
        public String getName() {
            return "rec";
        }

        @Override
        public boolean isLoggable(Level level) {
            return level.getSeverity() >= Level.DEBUG.getSeverity();
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level + " " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level + " " + java.text.MessageFormat.format(format, params));
        }

        @Override
        public void log(Level level, Supplier<String> msgSupplier) {
            lines.add(level + " " + msgSupplier.get());
        }
    }

    @Test
    void ncclLevelsMapToSystemLoggerLevels() {
        assertThat(PluginLogger.level(2)).isEqualTo(Level.WARNING);
        assertThat(PluginLogger.level(3)).isEqualTo(Level.DEBUG);
        assertThat(PluginLogger.level(1)).isEqualTo(Level.INFO);
        assertThat(PluginLogger.level(4)).isEqualTo(Level.ERROR);
        assertThat(PluginLogger.level(5)).isEqualTo(Level.TRACE);
    }

    @Test
    void eachCallSiteLogsABurstThenOneLinePerWindow() {
        PluginLogger l = new PluginLogger(new Recording());
        long t = 1_000;
        for (int i = 0; i < PluginLogger.BURST; i++) {
            assertThat(l.admit(42, t)).isZero();
        }
        for (int i = 0; i < 1000; i++) {
            assertThat(l.admit(42, t + i)).isEqualTo(-1);
        }
        assertThat(l.admit(7, t)).as("another site is independent").isZero();
        assertThat(l.admit(42, t + PluginLogger.WINDOW_NANOS)).as("suppressed count").isEqualTo(1000);
        assertThat(l.admit(42, t + PluginLogger.WINDOW_NANOS + 1)).isEqualTo(-1);
        assertThat(l.suppressed()).isEqualTo(1001);
    }

    @Test
    void pluginLogLinesCarryTheirFormattedArguments() {
        assertThat(NativeLogFormat.unavailabilityCause()).as("the formatting library built by the Maven build").isNull();
        Recording rec = new Recording();
        NetPlugin p = NetPlugin.open(TestPeers.path("v6"));
        assertThat(p.init(new PluginLogger(rec))).isZero();
        assertThat(rec.lines).anySatisfy(s -> assertThat(s).isEqualTo(
                "DEBUG [p_init:" + lineOf(rec, "p_init") + "] NET/testpeer : init, ncclNet v6, 16 request slots per comm"));
        // a WARN with a pointer and a size_t: an unaligned CUDA registration (refused before the comm is used)
        com.sun.jna.Memory out = new com.sun.jna.Memory(8);
        assertThat(p.regMr(1, 0x1001, 100, PtrType.CUDA.ncclBit(), com.sun.jna.Pointer.nativeValue(out))).isEqualTo(NcclResult.INTERNAL_ERROR);
        assertThat(rec.lines).anySatisfy(s -> assertThat(s).startsWith("WARNING [reg_common:")
                .endsWith("] NET/testpeer : CUDA memory 0x1001+100 not 4 KiB aligned"));
        assertThat(rec.lines).noneSatisfy(s -> assertThat(s).contains("%"));
    }

    @Test
    void withoutTheFormattingLibraryFormatStringsAreLoggedAndMarked() {
        Recording rec = new Recording();
        NetPlugin p = NetPlugin.open(TestPeers.path("v6"));
        assertThat(p.init(new PluginLogger(rec, false))).isZero();
        assertThat(rec.lines).anySatisfy(s -> assertThat(s).startsWith("DEBUG [p_init:")
                .endsWith("] NET/testpeer : init, ncclNet v%d, %d request slots per comm (format string)"));
    }

    /** The source line a recorded message of {@code function} names. */
    private static String lineOf(Recording rec, String function) {
        for (String s : rec.lines) {
            int i = s.indexOf("[" + function + ":");
            if (i >= 0) {
                return s.substring(i + function.length() + 2, s.indexOf(']', i));
            }
        }
        throw new AssertionError("no line from " + function + " in " + rec.lines);
    }
}
