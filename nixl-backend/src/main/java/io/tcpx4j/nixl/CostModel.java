package io.tcpx4j.nixl;

/**
 * The analytical model behind {@link NixlBackend#estimateXferCost}: a fixed start-up latency plus
 * bytes over a bandwidth, one for network transfers and one for local copies. The margin is a fixed
 * fraction of the estimate. It is a planning aid for NIXL's backend selection, not a measurement.
 *
 * @param networkBytesPerSecond throughput assumed to a peer (TCPX on A3: up to 200 Gbit/s per GPU NIC)
 * @param localBytesPerSecond   throughput assumed for copies within this agent
 * @param latencyMicros         fixed cost of one transfer
 * @param marginPercent         error margin reported, in percent of the estimate
 *
 * <p>Immutable.
 */
public record CostModel(double networkBytesPerSecond, double localBytesPerSecond, long latencyMicros,
                        int marginPercent) {

    /** 100 Gbit/s to peers, 20 GB/s locally, 50 microseconds start-up, a margin of half the estimate. */
    public static final CostModel DEFAULT = new CostModel(12.5e9, 20e9, 50, 50);

    public CostModel {
        if (!(networkBytesPerSecond > 0) || !(localBytesPerSecond > 0) || latencyMicros < 0
                || marginPercent < 0) {
            throw new IllegalArgumentException("cost model needs positive bandwidths and non-negative latency/margin");
        }
    }

    /** Estimated microseconds for {@code bytes}. */
    public long micros(long bytes, boolean local) {
        double bw = local ? localBytesPerSecond : networkBytesPerSecond;
        return latencyMicros + (long) Math.ceil(bytes * 1e6 / bw);
    }

    /** The margin for an estimate. */
    public long marginMicros(long estimateMicros) {
        return estimateMicros * marginPercent / 100;
    }
}
