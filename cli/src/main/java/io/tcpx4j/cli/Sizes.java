package io.tcpx4j.cli;

import io.tcpx4j.api.ByteSize;
import picocli.CommandLine;

/** picocli converters for byte sizes ({@link ByteSize}: {@code 4096}, {@code 4K}, {@code 1M}, ...). */
final class Sizes {

    private Sizes() {
    }

    /** picocli converter for one size that may be 0. */
    static final class OrZeroConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return ByteSize.parseOrZero(value.trim());
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** picocli converter for one size. */
    static final class Converter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return ByteSize.parse(value.trim());
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
