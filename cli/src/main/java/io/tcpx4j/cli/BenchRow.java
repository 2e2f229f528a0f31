package io.tcpx4j.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * One line of the bench table: one block size at one batch size. Times are in microseconds; the
 * distributions come from HdrHistogram (3 significant digits) over every measured transfer of every
 * thread.
 *
 * @param blockSize    bytes per descriptor
 * @param batchSize    descriptors per transfer
 * @param iterations   measured transfers, all threads together
 * @param bytes        bytes moved by the measured transfers
 * @param seconds      wall time of the measured transfers, from the first post to the last completion
 * @param gbps         bytes / seconds / 1e9
 * @param avgLatencyUs mean time from the start of a transfer's preparation to its completion
 * @param p50LatencyUs median of the same
 * @param p99LatencyUs 99th percentile of the same
 * @param p999LatencyUs 99.9th percentile of the same
 * @param maxLatencyUs the longest transfer of the row
 * @param avgPrepUs    mean time to build the descriptor lists and look up the session
 * @param p99PrepUs    99th percentile of the same
 * @param avgPostUs    mean time the {@code write}/{@code read} call took to return (validate, enqueue)
 * @param p99PostUs    99th percentile of the same
 * @param avgTxUs      mean time from the return of the post to the transfer's completion
 * @param p99TxUs      99th percentile of the same
 * @param mismatches   destination bytes that differed from the source ({@code --check-consistency}),
 *                     null when not checked
 * @param checkedBytesPerGpu the destination bytes checked on each GPU, by the ordinal the device memory reports
 *                     for the buffer; null when not checked or the destination is host memory
 * @param rawGbps      the same transfers as raw TCP over the same number of sockets, measured in the same
 *                     run ({@link RawBaseline}); null without {@code --baseline}
 * @param rawAvgLatencyUs mean time of one such raw transfer; null without {@code --baseline}
 * @param rawP99LatencyUs 99th percentile of the same; null without {@code --baseline}
 * @param rawMaxLatencyUs the longest raw transfer of the row (on a busy host or inside a CPU quota, the
 *                     stall a blocking socket suffered in the same run); null without {@code --baseline}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record BenchRow(long blockSize, int batchSize, int iterations, long bytes, double seconds, double gbps,
                double avgLatencyUs, double p50LatencyUs, double p99LatencyUs, double p999LatencyUs,
                double maxLatencyUs, double avgPrepUs, double p99PrepUs, double avgPostUs, double p99PostUs,
                double avgTxUs, double p99TxUs, Long mismatches, java.util.Map<Integer, Long> checkedBytesPerGpu,
                Double rawGbps, Double rawAvgLatencyUs, Double rawP99LatencyUs, Double rawMaxLatencyUs) {

    /** Bandwidth as a fraction of the raw baseline's; null without one. */
    @JsonProperty("xRaw")
    Double ratioToRaw() {
        return rawGbps == null || rawGbps <= 0 ? null : gbps / rawGbps;
    }

    /** The same row with the raw baseline's figures. */
    BenchRow withRaw(RawBaseline.Result raw) {
        return new BenchRow(blockSize, batchSize, iterations, bytes, seconds, gbps, avgLatencyUs,
                p50LatencyUs, p99LatencyUs, p999LatencyUs, maxLatencyUs, avgPrepUs, p99PrepUs, avgPostUs, p99PostUs,
                avgTxUs, p99TxUs, mismatches, checkedBytesPerGpu, raw.gbps(), raw.avgLatencyUs(), raw.p99LatencyUs(),
                raw.maxLatencyUs());
    }

    /** The same row with what its consistency check found. */
    BenchRow withChecked(Verified checked) {
        return new BenchRow(blockSize, batchSize, iterations, bytes, seconds, gbps, avgLatencyUs,
                p50LatencyUs, p99LatencyUs, p999LatencyUs, maxLatencyUs, avgPrepUs, p99PrepUs, avgPostUs, p99PostUs,
                avgTxUs, p99TxUs, checked.mismatches(), checked.perGpuOrNull(), rawGbps, rawAvgLatencyUs, rawP99LatencyUs,
                rawMaxLatencyUs);
    }
}
