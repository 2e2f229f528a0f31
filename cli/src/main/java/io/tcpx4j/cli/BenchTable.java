package io.tcpx4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * tcpx4j's own table: nixlbench's first columns in nixlbench's order (block size, batch size,
 * bandwidth, average latency, average and P99 prep and post), then the latency distribution (P50,
 * P99, P99.9, max), then the optional Mismatches and raw-baseline columns. Columns are
 * left-aligned under their titles.
 *
 * <p>Immutable.
 */
final class BenchTable implements RowFormat {

    private static final List<String> TITLES = List.of("Block Size (B)", "Batch Size", "B/W (GB/Sec)",
            "Avg Lat. (us)", "Avg Prep (us)", "P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "P50 Lat. (us)",
            "P99 Lat. (us)", "P99.9 Lat. (us)", "Max Lat. (us)");
    private static final List<Integer> WIDTHS = List.of(16, 11, 14, 15, 15, 15, 15, 15, 15, 15, 16, 15);
    private static final List<String> RAW_TITLES = List.of("Raw B/W (GB/Sec)", "Raw Lat. (us)", "x Raw B/W");
    private static final List<Integer> RAW_WIDTHS = List.of(18, 15, 15);
    private static final int MISMATCH_WIDTH = 10;

    private final boolean checked;
    private final boolean raw;

    /**
     * @param checked with a Mismatches column ({@code --check-consistency})
     * @param raw     with the raw baseline's columns
     */
    BenchTable(boolean checked, boolean raw) {
        this.checked = checked;
        this.raw = raw;
    }

    @Override
    public String head() {
        List<String> titles = new ArrayList<>(TITLES);
        if (checked) {
            titles.add("Mismatches");
        }
        if (raw) {
            titles.addAll(RAW_TITLES);
        }
        return line(titles) + tail();
    }

    @Override
    public String line(BenchRow r) {
        List<String> cells = new ArrayList<>(List.of(Long.toString(r.blockSize()), Integer.toString(r.batchSize()),
                f6(r.gbps()), f1(r.avgLatencyUs()), f2(r.avgPrepUs()), f2(r.p99PrepUs()), f2(r.avgPostUs()),
                f2(r.p99PostUs()), f1(r.p50LatencyUs()), f1(r.p99LatencyUs()), f1(r.p999LatencyUs()),
                f1(r.maxLatencyUs())));
        if (checked) {
            cells.add(r.mismatches() == null ? "" : Long.toString(r.mismatches()));
        }
        if (raw) {
            boolean has = r.rawGbps() != null;
            cells.add(has ? f6(r.rawGbps()) : "");
            cells.add(has ? f1(r.rawAvgLatencyUs()) : "");
            cells.add(has && r.ratioToRaw() != null ? f2(r.ratioToRaw()) : "");
        }
        return line(cells);
    }

    /** A rule as wide as the head. */
    @Override
    public String tail() {
        int width = WIDTHS.stream().mapToInt(w -> w + 1).sum() - 1 + (checked ? MISMATCH_WIDTH + 1 : 0)
                + (raw ? RAW_WIDTHS.stream().mapToInt(w -> w + 1).sum() : 0);
        return "-".repeat(width) + "\n";
    }

    private String line(List<String> cells) {
        StringBuilder b = new StringBuilder();
        List<Integer> widths = new ArrayList<>(WIDTHS);
        if (checked) {
            widths.add(MISMATCH_WIDTH);
        }
        if (raw) {
            widths.addAll(RAW_WIDTHS);
        }
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) {
                b.append(' ');
            }
            b.append(String.format(Locale.ROOT, "%-" + widths.get(i) + "s", cells.get(i)));
        }
        return b.toString().stripTrailing() + "\n";
    }

    static String f1(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static String f2(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    static String f6(double v) {
        return String.format(Locale.ROOT, "%.6f", v);
    }
}
