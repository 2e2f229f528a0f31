package io.tcpx4j.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.tcpx4j.api.ByteSize;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The result of a bench run and its two renderings: a nixlbench-style table and one JSON document.
 *
 * @param version  tcpx4j version
 * @param settings what ran
 * @param rows     one per (batch size, block size), in run order
 * @param interrupted true when SIGINT or SIGTERM ended the run early ({@code rows} holds the rows
 *                    finished by then), null otherwise
 */
@JsonPropertyOrder({"tool", "version", "settings", "interrupted", "rows", "mismatches"})
@JsonInclude(JsonInclude.Include.NON_NULL)
record BenchReport(String version, Settings settings, List<BenchRow> rows, Boolean interrupted) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    BenchReport {
        rows = List.copyOf(rows);
    }

    /** A report of a run that was not interrupted. */
    BenchReport(String version, Settings settings, List<BenchRow> rows) {
        this(version, settings, rows, null);
    }

    /** The settings as reported (sizes in bytes, enums in lower case). */
    @JsonPropertyOrder({"transport", "mode", "op", "mem", "blockSizes", "batchSizes", "iterations", "warmup",
            "warmupSeconds", "checkConsistency", "channels", "chunkSize", "progress", "layout", "busy", "cpus",
            "peer"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Settings(String transport, String mode, String op, String mem, List<Long> blockSizes,
                    List<Integer> batchSizes, String iterations, String warmup, double warmupSeconds,
                    boolean checkConsistency, int channels, int chunkSize, String progress, String layout,
                    int busy, List<Integer> cpus, String peer) {

        /** The settings of a run without busy loops, on CPUs not reported. */
        static Settings of(BenchSettings s, String peer) {
            return new Settings(s.transport().label(), lower(s.mode()), lower(s.op()), lower(s.memory()),
                    s.blockSizes(), s.batchSizes(),
                    s.iterations() > 0 ? Integer.toString(s.iterations()) : "auto",
                    s.warmup() >= 0 ? Integer.toString(s.warmup()) : "auto", s.warmupSeconds(),
                    s.checkConsistency(), s.channels(), s.chunkSize(), s.callerProgress() ? "caller" : "thread",
                    s.reversed() ? "reversed" : "adjacent", 0, null, peer);
        }

        /**
         * The same with {@code busy} busy loops ({@code --busy}) and the CPUs the bench process may run on
         * (null: unknown).
         */
        Settings withBusy(int busy, List<Integer> cpus) {
            return new Settings(transport, mode, op, mem, blockSizes, batchSizes, iterations, warmup, warmupSeconds,
                    checkConsistency, channels, chunkSize, progress, layout, busy, cpus, peer);
        }

        private static String lower(Enum<?> e) {
            return e.name().toLowerCase(Locale.ROOT);
        }
    }

    @JsonProperty("tool")
    public String tool() {
        return "tcpx4j bench";
    }

    /** Total mismatched bytes over all rows, or null when consistency was not checked. */
    @JsonProperty("mismatches")
    public Long mismatches() {
        if (!settings.checkConsistency()) {
            return null;
        }
        return rows.stream().mapToLong(r -> r.mismatches() == null ? 0 : r.mismatches()).sum();
    }

    String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot render the report as JSON", e);
        }
    }

    /** The header line describing the run. */
    String header() {
        Settings s = settings;
        return "tcpx4j bench: " + s.op() + " " + s.mem() + " over " + s.transport() + " (" + s.mode()
                + (s.peer() != null ? " -> " + s.peer() : "") + "), " + s.channels() + " channels, "
                + ByteSize.format(s.chunkSize()) + " chunks, " + s.progress() + "-driven progress"
                + ("reversed".equals(s.layout()) ? ", descriptors reversed" : "")
                + (s.checkConsistency() ? ", consistency checked" : "")
                + (s.busy() > 0 ? ", " + BusyLoops.describe(s.busy(), s.cpus()) : "");
    }

    /** The table, nixlbench style, one row per line, ending with a newline. */
    String toTable() {
        boolean raw = rows.stream().anyMatch(r -> r.rawGbps() != null);
        StringBuilder b = new StringBuilder(tableHead(settings.checkConsistency(), raw));
        for (BenchRow r : rows) {
            b.append(tableLine(r, settings.checkConsistency(), raw));
        }
        return b.append(tableRule(settings.checkConsistency(), raw)).toString();
    }

    /** The column titles and a rule, each line ending with a newline. */
    static String tableHead(boolean checked, boolean raw) {
        List<String> titles = new ArrayList<>(List.of("Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)",
                "P99 Lat. (us)", "Avg Prep (us)", "Avg Post (us)"));
        if (checked) {
            titles.add("Mismatches");
        }
        if (raw) {
            titles.addAll(List.of("Raw B/W (GB/Sec)", "Raw Lat. (us)", "x Raw B/W"));
        }
        return line(titles, checked, raw) + tableRule(checked, raw);
    }

    /** One row as a table line ending with a newline. */
    static String tableLine(BenchRow r, boolean checked, boolean raw) {
        List<String> cells = new ArrayList<>(List.of(Long.toString(r.blockSize()), Integer.toString(r.batchSize()),
                String.format(Locale.ROOT, "%.6f", r.gbps()), String.format(Locale.ROOT, "%.1f", r.avgLatencyUs()),
                String.format(Locale.ROOT, "%.1f", r.p99LatencyUs()), String.format(Locale.ROOT, "%.2f", r.avgPrepUs()),
                String.format(Locale.ROOT, "%.2f", r.avgPostUs())));
        if (checked) {
            cells.add(r.mismatches() == null ? "" : Long.toString(r.mismatches()));
        }
        if (raw) {
            boolean has = r.rawGbps() != null;
            cells.add(has ? String.format(Locale.ROOT, "%.6f", r.rawGbps()) : "");
            cells.add(has ? String.format(Locale.ROOT, "%.1f", r.rawAvgLatencyUs()) : "");
            cells.add(has && r.ratioToRaw() != null ? String.format(Locale.ROOT, "%.2f", r.ratioToRaw()) : "");
        }
        return line(cells, checked, raw);
    }

    static String tableRule(boolean checked, boolean raw) {
        return "-".repeat(107 + (checked ? 11 : 0) + (raw ? 51 : 0)) + "\n";
    }

    private static String line(List<String> cells, boolean checked, boolean raw) {
        String fmt = "%-16s %-11s %-14s %-15s %-15s %-15s %-15s" + (checked ? " %-10s" : "")
                + (raw ? " %-18s %-15s %-15s" : "");
        return String.format(Locale.ROOT, fmt, cells.toArray()).stripTrailing() + "\n";
    }
}
