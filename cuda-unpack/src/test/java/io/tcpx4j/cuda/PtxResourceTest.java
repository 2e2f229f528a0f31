package io.tcpx4j.cuda;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The shipped PTX must load on the drivers A3 images run: R535 is CUDA 12.2, whose JIT accepts PTX
 * ISA up to 8.2 and refuses newer with CUDA_ERROR_UNSUPPORTED_PTX_VERSION. The same holds for the
 * optional sm_90 PTX ({@link UnpackKernel#RESOURCE_SM90}), which must target exactly sm_90.
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

    @Test
    void theSm90PtxWhereItShipsDeclaresPtxIsaAtMost82AndTargetsSm90() {
        byte[] bytes = UnpackKernel.resource(UnpackKernel.RESOURCE_SM90);
        assumeTrue(bytes != null, UnpackKernel.RESOURCE_SM90 + " does not ship");
        String sm90 = new String(bytes, StandardCharsets.US_ASCII);
        Matcher m = Pattern.compile("(?m)^\\.version (\\d+)\\.(\\d+)\\s*$").matcher(sm90);
        assertThat(m.find()).as(".version line").isTrue();
        assertThat(Integer.parseInt(m.group(1)) * 10 + Integer.parseInt(m.group(2))).isLessThanOrEqualTo(82);
        assertThat(m.find()).as("a second .version line").isFalse();
        assertThat(sm90).containsPattern("(?m)^\\.target sm_90\\s*$");
        assertThat(sm90).containsPattern("(?m)^\\.address_size 64\\s*$");
        assertThat(sm90).contains(".visible .entry " + UnpackKernel.ENTRY + "(");
    }

    @Test
    void gpusBeforeHopperGetTheSm80Ptx() {
        byte[] sm80 = UnpackKernel.shippedPtx();
        assertThat(UnpackKernel.shippedPtx(8)).isEqualTo(sm80);
        assertThat(UnpackKernel.shippedPtx(7)).isEqualTo(sm80);
        byte[] sm90 = UnpackKernel.resource(UnpackKernel.RESOURCE_SM90);
        assertThat(UnpackKernel.shippedPtx(9)).isEqualTo(sm90 == null ? sm80 : sm90);
        assertThat(Arrays.equals(UnpackKernel.shippedPtx(10), UnpackKernel.shippedPtx(9))).isTrue();
    }
}
