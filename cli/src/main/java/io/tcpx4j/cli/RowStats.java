package io.tcpx4j.cli;

import org.HdrHistogram.Histogram;

/**
 * The timings of one row's measured transfers, as one thread records them: per transfer its prep, post,
 * transmission (post returned to done) and latency (prep started to done), each into a histogram
 * (nanoseconds, 3 significant digits). Threads record apart and are merged with {@link #add}.
 *
 * <p><b>Not thread-safe</b>: one thread records; merge after it has finished.
 */
final class RowStats {

    /** Longest value the histograms hold: an hour. */
    private static final long HIGHEST = 3_600_000_000_000L;

    private final Histogram latency = new Histogram(HIGHEST, 3);
    private final Histogram prep = new Histogram(HIGHEST, 3);
    private final Histogram post = new Histogram(HIGHEST, 3);
    private final Histogram tx = new Histogram(HIGHEST, 3);

    /** One transfer: its phases in nanoseconds. */
    void record(long prepNanos, long postNanos, long txNanos) {
        prep.recordValue(clamp(prepNanos));
        post.recordValue(clamp(postNanos));
        tx.recordValue(clamp(txNanos));
        latency.recordValue(Math.max(1, clamp(prepNanos + postNanos + txNanos)));
    }

    /** Adds another thread's transfers of the same row. */
    void add(RowStats other) {
        latency.add(other.latency);
        prep.add(other.prep);
        post.add(other.post);
        tx.add(other.tx);
    }

    /** Transfers recorded. */
    long count() {
        return latency.getTotalCount();
    }

    /** The row: {@code bytes} moved by the recorded transfers in {@code elapsedNanos} of wall time. */
    BenchRow toRow(long block, int batch, long bytes, long elapsedNanos) {
        double seconds = Math.max(1, elapsedNanos) / 1e9;
        return new BenchRow(block, batch, (int) count(), bytes, seconds, bytes / seconds / 1e9,
                us(latency.getMean()), us(latency.getValueAtPercentile(50)), us(latency.getValueAtPercentile(99)),
                us(latency.getValueAtPercentile(99.9)), us(latency.getMaxValue()),
                us(prep.getMean()), us(prep.getValueAtPercentile(99)),
                us(post.getMean()), us(post.getValueAtPercentile(99)),
                us(tx.getMean()), us(tx.getValueAtPercentile(99)), null, null, null, null, null, null);
    }

    private static double us(double nanos) {
        return nanos / 1e3;
    }

    private static long clamp(long nanos) {
        return Math.max(0, Math.min(HIGHEST, nanos));
    }
}
