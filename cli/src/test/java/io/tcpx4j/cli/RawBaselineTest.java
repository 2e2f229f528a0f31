package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The raw baseline moves exactly each transfer's bytes (a reader that got fewer or more would never
 * answer, or answer the next transfer early, and the measurement would hang or fail), one chunk or many.
 */
@Timeout(60)
class RawBaselineTest {

    @Test
    void oneChunkTransfersAreRoundTrips() throws Exception {
        try (RawBaseline raw = new RawBaseline(2, 512 * 1024)) {
            RawBaseline.Result r = raw.measure(4096, 5, 50);
            assertThat(r.gbps()).isPositive();
            assertThat(r.avgLatencyUs()).isPositive();
            assertThat(r.p99LatencyUs()).isGreaterThanOrEqualTo(r.avgLatencyUs() / 2);
            assertThat(r.maxLatencyUs()).as("the longest transfer").isGreaterThanOrEqualTo(r.p99LatencyUs());
        }
    }

    @Test
    void chunksSpreadOverEverySocketAndRowsFollowEachOther() throws Exception {
        int chunk = 64 * 1024;
        try (RawBaseline raw = new RawBaseline(3, chunk)) {
            // 7 chunks, the last one short: sockets carry 3, 2 and 2 chunks
            assertThat(raw.measure(6L * chunk + 17, 1, 5).gbps()).isPositive();
            // a smaller row right after: shares are recomputed, nothing is left over from the last one
            assertThat(raw.measure(100, 1, 5).gbps()).isPositive();
            assertThat(raw.measure(2L * chunk, 0, 3).gbps()).isPositive();
        }
    }

    @Test
    void closeEndsTheReaders() throws Exception {
        RawBaseline raw = new RawBaseline(2, 4096);
        raw.measure(8192, 0, 2);
        raw.close();
        Thread.sleep(100);
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().startsWith("tcpx4j-raw-baseline-")
                && t.isAlive());
    }
}
