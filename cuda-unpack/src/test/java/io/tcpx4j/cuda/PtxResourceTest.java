package io.tcpx4j.cuda;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped PTX must load on the drivers A3 images run: R535 is CUDA 12.2, whose JIT accepts PTX
 * ISA up to 8.2 and refuses newer with CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
 */
class PtxResourceTest {

    private final String ptx = new String(UnpackKernel.shippedPtx(), StandardCharsets.US_ASCII);

    @Test
    void declaresPtxIsaAtMost82() {
        Matcher m = Pattern.compile("(?m)^\\.version (\\d+)\\.(\\d+)\\s*$").matcher(ptx);
        assertThat(m.find()).as(".version line").isTrue();
        int version = Integer.parseInt(m.group(1)) * 10 + Integer.parseInt(m.group(2));
        assertThat(version).as("PTX ISA version x10").isLessThanOrEqualTo(82);
        assertThat(m.find()).as("a second .version line").isFalse();
    }

    @Test
    void targetsSm90OrOlderWith64BitAddresses() {
        Matcher m = Pattern.compile("(?m)^\\.target sm_(\\d+)([a-z]?)\\s*$").matcher(ptx);
        assertThat(m.find()).as(".target line").isTrue();
        assertThat(Integer.parseInt(m.group(1))).isLessThanOrEqualTo(90);
        // sm_90a code runs on H100 only and cannot be JIT-compiled for anything else.
        assertThat(m.group(2)).isEmpty();
        assertThat(ptx).containsPattern("(?m)^\\.address_size 64\\s*$");
    }

    @Test
    void exportsTheEntryTheUnpackerLaunches() {
        assertThat(ptx).contains(".visible .entry " + UnpackKernel.ENTRY + "(");
    }
}
