package io.tcpx4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rows as CSV ({@code --csv}): a header of the JSON document's row field names, then one line per
 * row; numbers only (bandwidth and seconds with six decimals, microseconds with three), no quoting
 * needed. Optional columns (mismatches, the raw baseline's) are present when the run has them, empty
 * in a row without a value.
 *
 * <p>Immutable.
 */
final class BenchCsv implements RowFormat {

    private static final List<String> COLUMNS = List.of("blockSize", "batchSize", "iterations", "bytes", "seconds",
            "gbps", "avgLatencyUs", "p50LatencyUs", "p99LatencyUs", "p999LatencyUs", "maxLatencyUs", "avgPrepUs",
            "p99PrepUs", "avgPostUs", "p99PostUs", "avgTxUs", "p99TxUs");

    private final boolean checked;
    private final boolean raw;

    BenchCsv(boolean checked, boolean raw) {
        this.checked = checked;
        this.raw = raw;
    }

    @Override
    public String head() {
        List<String> columns = new ArrayList<>(COLUMNS);
        if (checked) {
            columns.add("mismatches");
        }
        if (raw) {
            columns.addAll(List.of("rawGbps", "rawAvgLatencyUs", "xRaw", "rawP99LatencyUs", "rawMaxLatencyUs"));
        }
        return String.join(",", columns) + "\n";
    }

    @Override
    public String line(BenchRow r) {
        List<String> cells = new ArrayList<>(List.of(Long.toString(r.blockSize()), Integer.toString(r.batchSize()),
                Integer.toString(r.iterations()), Long.toString(r.bytes()), f6(r.seconds()), f6(r.gbps()),
                f3(r.avgLatencyUs()), f3(r.p50LatencyUs()), f3(r.p99LatencyUs()), f3(r.p999LatencyUs()),
                f3(r.maxLatencyUs()), f3(r.avgPrepUs()), f3(r.p99PrepUs()), f3(r.avgPostUs()), f3(r.p99PostUs()),
                f3(r.avgTxUs()), f3(r.p99TxUs())));
        if (checked) {
            cells.add(r.mismatches() == null ? "" : Long.toString(r.mismatches()));
        }
        if (raw) {
            cells.add(r.rawGbps() == null ? "" : f6(r.rawGbps()));
            cells.add(r.rawAvgLatencyUs() == null ? "" : f3(r.rawAvgLatencyUs()));
            cells.add(r.ratioToRaw() == null ? "" : f6(r.ratioToRaw()));
            cells.add(r.rawP99LatencyUs() == null ? "" : f3(r.rawP99LatencyUs()));
            cells.add(r.rawMaxLatencyUs() == null ? "" : f3(r.rawMaxLatencyUs()));
        }
        return String.join(",", cells) + "\n";
    }

    @Override
    public String tail() {
        return "";
    }

    private static String f3(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }

    private static String f6(double v) {
        return String.format(Locale.ROOT, "%.6f", v);
    }
}
