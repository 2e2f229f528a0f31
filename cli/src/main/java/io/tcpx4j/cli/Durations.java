package io.tcpx4j.cli;

import picocli.CommandLine;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** Time spans on the command line: {@code 500ms}, {@code 30s}, {@code 2m}, or a plain number of seconds. */
final class Durations {

    private Durations() {
    }

    /** A suffix and how many nanoseconds one of it is. */
    private record Unit(String suffix, long nanos) {
    }

    /** Longer suffixes first, so that {@code ms} is not read as {@code s}. */
    private static final List<Unit> SPAN_UNITS = List.of(new Unit("ms", 1_000_000L), new Unit("s", 1_000_000_000L),
            new Unit("m", 60_000_000_000L));
    private static final List<Unit> SPIN_UNITS = List.of(new Unit("ns", 1L), new Unit("us", 1_000L),
            new Unit("ms", 1_000_000L), new Unit("s", 1_000_000_000L));

    static Duration parse(String text) {
        long nanos = nanos(text, SPAN_UNITS, 1_000_000_000L, "a duration like 500ms, 30s, 2m or 30");
        if (nanos <= 0) {
            throw new IllegalArgumentException("'" + text + "' must be positive");
        }
        return Duration.ofNanos(nanos);
    }

    /** {@code 500 ms} or {@code 30 s}. */
    static String format(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
    }

    /** picocli converter. */
    static final class Converter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /**
     * A spin time: {@code 0}, or a number with {@code ns}, {@code us}, {@code ms} or {@code s}; 0 .. 1 s (the
     * engine's range, {@link io.tcpx4j.api.Progress}).
     */
    static Duration parseSpin(String text) {
        long nanos = nanos(text, SPIN_UNITS, 0, "a spin time like 0, 50us, 1ms");
        if (nanos < 0 || nanos > 1_000_000_000L) {
            throw new IllegalArgumentException("'" + text + "' must be 0..1s");
        }
        return Duration.ofNanos(nanos);
    }

    /**
     * {@code text}'s number times its unit in nanoseconds; a number without a unit counts {@code bareNanos}
     * each (0: only {@code 0} may stand without one). -1 for a value too large to count in nanoseconds.
     */
    private static long nanos(String text, List<Unit> units, long bareNanos, String example) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long factor = bareNanos;
        String number = t;
        for (Unit u : units) {
            if (t.endsWith(u.suffix())) {
                factor = u.nanos();
                number = t.substring(0, t.length() - u.suffix().length());
                break;
            }
        }
        long n;
        try {
            n = Long.parseLong(number.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not " + example);
        }
        if (factor == 0) {
            if (n != 0) {
                throw new IllegalArgumentException("'" + text + "' is not " + example);
            }
            return 0;
        }
        return Math.abs(n) > Long.MAX_VALUE / factor ? -1 : n * factor;
    }

    /** picocli converter for spin times. */
    static final class SpinConverter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return parseSpin(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
