package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Text the command line parses and prints: sizes, host:port, short error lines. */
class CliTextTest {

    @Test
    void sizeOptionsSayWhatIsWrongInPicocliTerms() {
        assertThat(new Sizes.Converter().convert(" 512K ")).isEqualTo(512 * 1024);
        assertThat(new Sizes.OrZeroConverter().convert("0")).isZero();
        assertThatThrownBy(() -> new Sizes.Converter().convert("0"))
                .isInstanceOf(CommandLine.TypeConversionException.class).hasMessage("size '0' must be at least 1 byte");
        assertThatThrownBy(() -> new Sizes.OrZeroConverter().convert("4X"))
                .isInstanceOf(CommandLine.TypeConversionException.class)
                .hasMessage("'4X' is not a size (examples: 4096, 4K, 1M, 2G)");
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
