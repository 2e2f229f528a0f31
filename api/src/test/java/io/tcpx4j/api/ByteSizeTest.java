package io.tcpx4j.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ByteSizeTest {

    @Test
    void parsesBinarySuffixesInAnyCase() {
        assertThat(ByteSize.parse("4096")).isEqualTo(4096);
        assertThat(ByteSize.parse("4K")).isEqualTo(4096);
        assertThat(ByteSize.parse("4k")).isEqualTo(4096);
        assertThat(ByteSize.parse("4KiB")).isEqualTo(4096);
        assertThat(ByteSize.parse("4kb")).isEqualTo(4096);
        assertThat(ByteSize.parse("64M")).isEqualTo(64L << 20);
        assertThat(ByteSize.parse("2G")).isEqualTo(2L << 30);
        assertThat(ByteSize.parse("1T")).isEqualTo(1L << 40);
        assertThat(ByteSize.parse("100B")).isEqualTo(100);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "0", "0K", "-4K", "4X", "K", "4.5M", " 4K", "4 K", "4KK", "4iB", "abc", "1e6",
            "99999999999999999999", "9000000T"})
    void rejectsGarbage(String text) {
        assertThatThrownBy(() -> ByteSize.parse(text)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void formatsTheShortestExactForm() {
        assertThat(ByteSize.format(4096)).isEqualTo("4K");
        assertThat(ByteSize.format(64L << 20)).isEqualTo("64M");
        assertThat(ByteSize.format(1L << 30)).isEqualTo("1G");
        assertThat(ByteSize.format(1000)).isEqualTo("1000");
        assertThat(ByteSize.format(1536)).isEqualTo("1536");
        assertThat(ByteSize.format(3L << 20)).isEqualTo("3M");
    }

    @Test
    void zeroIsASizeOnlyWhereALimitMayBeOff() {
        assertThat(ByteSize.parseOrZero("0")).isZero();
        assertThat(ByteSize.parseOrZero("0K")).isZero();
        assertThatThrownBy(() -> ByteSize.parseOrZero("-1")).isInstanceOf(IllegalArgumentException.class);
    }
}
