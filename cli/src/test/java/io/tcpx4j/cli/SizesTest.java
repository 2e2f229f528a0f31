package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SizesTest {

    @Test
    void parsesBinarySuffixesInAnyCase() {
        assertThat(Sizes.parse("4096")).isEqualTo(4096);
        assertThat(Sizes.parse("4K")).isEqualTo(4096);
        assertThat(Sizes.parse("4k")).isEqualTo(4096);
        assertThat(Sizes.parse("4KiB")).isEqualTo(4096);
        assertThat(Sizes.parse("4kb")).isEqualTo(4096);
        assertThat(Sizes.parse("64M")).isEqualTo(64L << 20);
        assertThat(Sizes.parse("2G")).isEqualTo(2L << 30);
        assertThat(Sizes.parse("1T")).isEqualTo(1L << 40);
        assertThat(Sizes.parse("100B")).isEqualTo(100);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "0", "0K", "-4K", "4X", "K", "4.5M", " 4K", "4 K", "4KK", "4iB", "abc", "1e6",
            "99999999999999999999", "9000000T"})
    void rejectsGarbage(String text) {
        assertThatThrownBy(() -> Sizes.parse(text)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void formatsTheShortestExactForm() {
        assertThat(Sizes.format(4096)).isEqualTo("4K");
        assertThat(Sizes.format(64L << 20)).isEqualTo("64M");
        assertThat(Sizes.format(1L << 30)).isEqualTo("1G");
        assertThat(Sizes.format(1000)).isEqualTo("1000");
        assertThat(Sizes.format(1536)).isEqualTo("1536");
        assertThat(Sizes.format(3L << 20)).isEqualTo("3M");
    }

    @Test
    void hostPortParsesAndRejects() {
        assertThat(HostPort.parse("10.0.0.1:7117")).isEqualTo(new HostPort("10.0.0.1", 7117));
        assertThat(HostPort.parse("[::1]:80")).isEqualTo(new HostPort("::1", 80));
        assertThat(HostPort.parse("[::1]:80").toString()).isEqualTo("[::1]:80");
        for (String bad : new String[] {"host", "host:", ":80", "host:x", "host:70000", "::1:80"}) {
            assertThatThrownBy(() -> HostPort.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void nativeLoaderMessagesShrinkToOneShortLine() {
        String jcuda = "Error while loading native library \"JCudaDriver-12.0.0-linux-x86_64\"\nOperating system name: Linux\n"
                + "---(start of nested stack traces)---\n" + "x".repeat(400) + "\njava.lang.UnsatisfiedLinkError: "
                + "/tmp/libJCudaDriver.so: libcuda.so.1: cannot open shared object file: No such file or directory\n"
                + "\tat java.base/jdk.internal.loader.NativeLibraries.load(Native Method)\n";
        assertThat(Main.shortCause(new UnsatisfiedLinkError(jcuda))).isEqualTo("cannot load /tmp/libJCudaDriver.so:"
                + " libcuda.so.1: cannot open shared object file: No such file or directory");
        assertThat(Main.shortCause(new IllegalStateException("a\n b"))).isEqualTo("java.lang.IllegalStateException: a b");
        assertThat(Main.shortCause(new IllegalStateException("y".repeat(500)))).hasSize(303);
    }
}
