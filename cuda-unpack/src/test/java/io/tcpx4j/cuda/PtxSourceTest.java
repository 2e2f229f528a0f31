package io.tcpx4j.cuda;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped PTX was generated from the unpack.cu and with the nvcc flags in this tree: gen-ptx.sh
 * records the source's SHA-256 and its flags in the PTX's first line, and this test recomputes the
 * hash in every build (no nvcc needed). PtxRegenerationTest goes further where nvcc 13.0 is
 * installed and regenerates the whole file.
 */
class PtxSourceTest {

    private static final Pattern STAMP = Pattern.compile("^// tcpx4j unpack.cu sha256 ([0-9a-f]{64}), nvcc flags: (.+)$");
    private static final Path MODULE = locateModule();

    private final String ptx = new String(UnpackKernel.shippedPtx(), StandardCharsets.US_ASCII);

    @Test
    void recordedHashIsTheSourceHash() throws Exception {
        Matcher stamp = stamp();
        byte[] source = Files.readAllBytes(MODULE.resolve("src/main/cuda/unpack.cu"));
        String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(source));
        assertThat(stamp.group(1)).as("unpack.cu changed since the PTX was generated: run src/main/cuda/gen-ptx.sh")
                .isEqualTo(hash);
    }

    @Test
    void recordedFlagsAreGenPtxDefaults() throws Exception {
        Matcher stamp = stamp();
        String script = Files.readString(MODULE.resolve("src/main/cuda/gen-ptx.sh"), StandardCharsets.UTF_8);
        Matcher defaults = Pattern.compile("(?m)^flags=\"(.*)\\$\\{\\*:\\+ \\$\\*}\"$").matcher(script);
        assertThat(defaults.find()).as("gen-ptx.sh's flags line").isTrue();
        assertThat(stamp.group(2)).as("the shipped PTX is built with gen-ptx.sh's default flags, no extra ones")
                .isEqualTo(defaults.group(1));
    }

    private Matcher stamp() {
        Matcher m = STAMP.matcher(ptx.lines().findFirst().orElse(""));
        assertThat(m.matches()).as("first line of unpack.ptx: the stamp gen-ptx.sh writes").isTrue();
        return m;
    }

    /** Surefire runs in the module directory; an IDE may run from the repository root. */
    private static Path locateModule() {
        Path here = Path.of("").toAbsolutePath();
        return Files.exists(here.resolve("src/main/cuda")) ? here : here.resolve("cuda-unpack");
    }
}
