package io.tcpx4j.cli;

import picocli.CommandLine;

import java.time.Duration;
import java.util.Locale;

/** Time spans on the command line: {@code 500ms}, {@code 30s}, {@code 2m}, or a plain number of seconds. */
final class Durations {

    private Durations() {
    }

    static Duration parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long factorMs;
        String number;
        if (t.endsWith("ms")) {
            factorMs = 1;
            number = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            factorMs = 1000;
            number = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            factorMs = 60_000;
            number = t.substring(0, t.length() - 1);
        } else {
            factorMs = 1000;
            number = t;
        }
        long n;
        try {
            n = Long.parseLong(number.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a duration like 500ms, 30s, 2m or 30");
        }
        if (n <= 0 || n > Long.MAX_VALUE / factorMs / 1_000_000) {
            throw new IllegalArgumentException("'" + text + "' must be positive");
        }
        return Duration.ofMillis(n * factorMs);
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
     * engine's range, {@link io.tcpx4j.domain.Progress}).
     */
    static Duration parseSpin(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long factorNanos;
        String number;
        if (t.endsWith("ns")) {
            factorNanos = 1;
            number = t.substring(0, t.length() - 2);
        } else if (t.endsWith("us")) {
            factorNanos = 1_000;
            number = t.substring(0, t.length() - 2);
        } else if (t.endsWith("ms")) {
            factorNanos = 1_000_000;
            number = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            factorNanos = 1_000_000_000;
            number = t.substring(0, t.length() - 1);
        } else if (t.equals("0")) {
            return Duration.ZERO;
        } else {
            throw new IllegalArgumentException("'" + text + "' is not a spin time like 0, 50us, 1ms");
        }
        long n;
        try {
            n = Long.parseLong(number.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a spin time like 0, 50us, 1ms");
        }
        if (n < 0 || n > 1_000_000_000L / factorNanos) {
            throw new IllegalArgumentException("'" + text + "' must be 0..1s");
        }
        return Duration.ofNanos(n * factorNanos);
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
