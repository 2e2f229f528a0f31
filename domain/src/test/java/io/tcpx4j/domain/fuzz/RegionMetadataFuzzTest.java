package io.tcpx4j.domain.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.protocol.RegionMetadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/** Region metadata is published by peers and loaded as-is: any bytes at all. */
class RegionMetadataFuzzTest {

    private static final AtomicLong EXECUTIONS = new AtomicLong();

    static Stream<byte[]> seeds() {
        return Stream.of(
                new RegionMetadata("decode-3", new MemoryDescriptor(0x7f00_0000_1000L, 1 << 20, MemoryKind.VRAM, 5)).encode(),
                new RegionMetadata("a", MemoryDescriptor.dram(4096, 0)).encode(),
                new RegionMetadata("b", MemoryDescriptor.dram(-16384L, 8192)).encode());
    }

    @MethodSource("seeds")
    @FuzzTest(maxExecutions = 110_000, maxDuration = "4m")
    void decode(byte[] bytes) {
        EXECUTIONS.incrementAndGet();
        RegionMetadata md;
        try {
            md = RegionMetadata.decode(bytes);
        } catch (TransferException e) {
            DecoderContract.allowedRejection(e, true);
            return;
        }
        MemoryDescriptor r = md.region();
        if (r.length() < 0 || r.device() < 0 || (r.length() > 0 && Long.compareUnsigned(r.end(), r.address()) < 0)) {
            throw new AssertionError("accepted an impossible region " + r);
        }
        if (!Arrays.equals(md.encode(), bytes)) {
            throw new AssertionError("metadata " + md + " does not re-encode to the bytes it came from");
        }
    }

    @AfterAll
    static void ranEnough() {
        DecoderContract.checkExecutions("RegionMetadata.decode", EXECUTIONS);
    }
}
