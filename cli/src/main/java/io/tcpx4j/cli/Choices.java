package io.tcpx4j.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.util.Locale;

/** Flags whose value is one of an enum's names: accepted in any case, '-' for '_'. */
final class Choices {

    private Choices() {
    }

    /** An enum value by its name; {@code expected} names the choices in the error. */
    static <E extends Enum<E>> E of(Class<E> type, String value, String expected) {
        try {
            return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException("expected " + expected + ", not '" + value + "'");
        }
    }

    static final class Layout implements ITypeConverter<BenchCommand.Layout> {
        @Override
        public BenchCommand.Layout convert(String value) {
            return of(BenchCommand.Layout.class, value, "adjacent or reversed");
        }
    }

    static final class Format implements ITypeConverter<BenchCommand.Format> {
        @Override
        public BenchCommand.Format convert(String value) {
            return of(BenchCommand.Format.class, value, "table, nixlbench, csv or json");
        }
    }

    static final class Progress implements ITypeConverter<io.tcpx4j.api.Progress.Driver> {
        @Override
        public io.tcpx4j.api.Progress.Driver convert(String value) {
            return of(io.tcpx4j.api.Progress.Driver.class, value, "thread or caller");
        }
    }
}
