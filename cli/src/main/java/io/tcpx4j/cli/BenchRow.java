package io.tcpx4j.cli;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One line of the bench table: one block size at one batch size.
 *
 * @param blockSize    bytes per descriptor
 * @param batchSize    descriptors per transfer
 * @param iterations   measured transfers
 * @param bytes        bytes moved by the measured transfers
 * @param seconds      wall time of the measured transfers
 * @param gbps         bytes / seconds / 1e9
 * @param avgLatencyUs mean time from the start of a transfer's preparation to its completion
 * @param p99LatencyUs 99th percentile of the same
 * @param avgPrepUs    mean time to build the descriptor lists and look up the session
 * @param avgPostUs    mean time the {@code write}/{@code read} call took to return (validate, enqueue)
 * @param mismatches   destination bytes that differed from the source ({@code --check-consistency}),
 *                     null when not checked
 * @param rawGbps      the same transfers as raw TCP over the same number of sockets, measured in the same
 *                     run ({@link RawBaseline}); null without {@code --baseline}
 * @param rawAvgLatencyUs mean time of one such raw transfer; null without {@code --baseline}
 * @param maxLatencyUs the longest transfer of the row (same span as the average), null where not
 *                     recorded
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record BenchRow(long blockSize, int batchSize, int iterations, long bytes, double seconds, double gbps,
                double avgLatencyUs, double p99LatencyUs, double avgPrepUs, double avgPostUs, Long mismatches,
                Double rawGbps, Double rawAvgLatencyUs, Double maxLatencyUs) {

    /** A row without a raw baseline. */
    BenchRow(long blockSize, int batchSize, int iterations, long bytes, double seconds, double gbps,
             double avgLatencyUs, double p99LatencyUs, double avgPrepUs, double avgPostUs, Long mismatches) {
        this(blockSize, batchSize, iterations, bytes, seconds, gbps, avgLatencyUs, p99LatencyUs, avgPrepUs, avgPostUs,
                mismatches, null, null, null);
    }

    /** Bandwidth as a fraction of the raw baseline's; null without one. */
    @com.fasterxml.jackson.annotation.JsonProperty("xRaw")
    Double ratioToRaw() {
        return rawGbps == null || rawGbps <= 0 ? null : gbps / rawGbps;
    }

    /** The same row with the raw baseline's figures. */
    BenchRow withRaw(double gbps, double avgLatencyUs) {
        return new BenchRow(blockSize, batchSize, iterations, bytes, seconds, this.gbps, this.avgLatencyUs,
                p99LatencyUs, avgPrepUs, avgPostUs, mismatches, gbps, avgLatencyUs, maxLatencyUs);
    }

    /** The same row with its longest transfer. */
    BenchRow withMaxLatency(double us) {
        return new BenchRow(blockSize, batchSize, iterations, bytes, seconds, gbps, avgLatencyUs, p99LatencyUs,
                avgPrepUs, avgPostUs, mismatches, rawGbps, rawAvgLatencyUs, us);
    }
}
