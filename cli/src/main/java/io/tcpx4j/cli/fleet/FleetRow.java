package io.tcpx4j.cli.fleet;

import org.HdrHistogram.Histogram;

/**
 * One row of a fleet run, over all its initiators: what every worker reports for the row.
 *
 * @param blockSize   bytes per descriptor
 * @param batchSize   descriptors per transfer
 * @param iterations  measured iterations of each initiator (an iteration moves one transfer to each of
 *                    its targets)
 * @param bytes       bytes all initiators moved in their measured iterations
 * @param seconds     the longest wall time of one initiator's measured iterations (they start together)
 * @param latency     every initiator's iteration latencies, from the start of preparing the iteration to
 *                    the end of its last transfer, in nanoseconds
 * @param prep         time of each iteration to build its descriptor lists and get its sessions, in ns
 * @param post         time of each iteration's {@code write}/{@code read} calls, in ns
 * @param tx           the rest of each iteration: from its last post until every transfer ended, in ns
 * @param mismatches  destination bytes that differed from the source on all workers, null when not checked
 * @param checkedPerGpu destination bytes checked on all workers, by GPU ordinal (each worker's own GPUs); null
 *                    when not checked or the destinations are host memory
 */
public record FleetRow(long blockSize, int batchSize, int iterations, long bytes, double seconds, Histogram latency,
                       Histogram prep, Histogram post, Histogram tx, Long mismatches,
                       java.util.Map<Integer, Long> checkedPerGpu) {

    /** Bytes per second over all initiators, in 10^9. */
    public double gbps() {
        return seconds <= 0 ? 0 : bytes / seconds / 1e9;
    }
}
