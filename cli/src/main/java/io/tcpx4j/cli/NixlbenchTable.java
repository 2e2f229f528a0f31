package io.tcpx4j.cli;

import java.util.Locale;

/**
 * nixlbench's table ({@code --format nixlbench}): its ten columns in its order, titles, widths, rule
 * and number formats, so that what parses nixlbench's output parses this. The header is the titles
 * left-aligned in fields of 20 (the first) and 15 characters, then a rule of 160 dashes; a row is
 * block and batch size as integers, bandwidth with six decimals, the rest with one, in the same fields
 * (a value wider than its field runs into the next, as with nixlbench's {@code std::setw}).
 *
 * <p>The columns as nixlbench defines them, from our measurements:
 * <ul>
 *   <li>Avg Lat. (us): the row's wall time over (transfers per thread x batch size), nixlbench's
 *       figure; not the per-transfer latency of tcpx4j's own table;</li>
 *   <li>Avg/P99 Prep (us): building the descriptor lists and getting the session, per transfer;</li>
 *   <li>Avg/P99 Post (us): the {@code write}/{@code read} call;</li>
 *   <li>Avg/P99 Tx (us): from the post's return until the transfer is DONE.</li>
 * </ul>
 *
 * <p>Immutable.
 */
final class NixlbenchTable implements RowFormat {

    static final String[] TITLES = {"Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)",
        "Avg Prep (us)", "P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)"};
    private static final String FIELDS = "%-20s" + "%-15s".repeat(9);
    private static final int RULE = 160;

    private final int threads;

    /** @param threads initiator threads of the run (nixlbench's Avg Lat. counts transfers per thread) */
    NixlbenchTable(int threads) {
        this.threads = threads;
    }

    @Override
    public String head() {
        return String.format(Locale.ROOT, FIELDS, (Object[]) TITLES) + "\n" + "-".repeat(RULE) + "\n";
    }

    @Override
    public String line(BenchRow r) {
        double perThread = (double) r.iterations() / threads;
        double avgLatency = r.seconds() * 1e6 / (perThread * r.batchSize());
        return String.format(Locale.ROOT, "%-20d%-15d%-15.6f" + "%-15.1f".repeat(7) + "\n", r.blockSize(),
                r.batchSize(), r.gbps(), avgLatency, r.avgPrepUs(), r.p99PrepUs(), r.avgPostUs(), r.p99PostUs(),
                r.avgTxUs(), r.p99TxUs());
    }

    /** nixlbench prints nothing after its rows. */
    @Override
    public String tail() {
        return "";
    }
}
