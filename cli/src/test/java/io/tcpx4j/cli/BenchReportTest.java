package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.api.MemoryKind;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class BenchReportTest {

    /**
     * A row of nixlbench's table as a script would match it: block and batch size, bandwidth with six
     * decimals, then seven figures with one (nixlbench prints them with std::fixed and std::setw).
     */
    static final Pattern NIXLBENCH_ROW = Pattern.compile("^(\\d+)\\s+(\\d+)\\s+(\\d+\\.\\d{6})\\s+(\\d+\\.\\d)\\s+"
            + "(\\d+\\.\\d)\\s+(\\d+\\.\\d)\\s+(\\d+\\.\\d)\\s+(\\d+\\.\\d)\\s+(\\d+\\.\\d)\\s+(\\d+\\.\\d)\\s*$");
    /** nixlbench's header line. */
    static final Pattern NIXLBENCH_HEADER = Pattern.compile("^Block Size \\(B\\)\\s+Batch Size\\s+B/W \\(GB/Sec\\)\\s+"
            + "Avg Lat\\. \\(us\\)\\s+Avg Prep \\(us\\)\\s+P99 Prep \\(us\\)\\s+Avg Post \\(us\\)\\s+P99 Post \\(us\\)\\s+"
            + "Avg Tx \\(us\\)\\s+P99 Tx \\(us\\)\\s*$");

    static BenchSettings settings(boolean check, int threads) {
        return new BenchSettings(TransportKind.LOOPBACK, BenchSettings.Mode.EMBEDDED, BenchSettings.Op.WRITE,
                MemoryKind.DRAM, MemoryKind.DRAM, List.of(4096L, 1L << 20), List.of(1, 4), 0, -1, 1, true, check, 2,
                512 * 1024, null, true, false, threads, 1);
    }

    private static BenchSettings settings(boolean check) {
        return settings(check, 1);
    }

    private static BenchRow row(long block, int batch, int iterations, double seconds, double avg, double p99,
                                double prep, double post, Long mismatches) {
        long bytes = block * batch * iterations;
        return new BenchRow(block, batch, iterations, bytes, seconds, bytes / seconds / 1e9, avg, avg * 0.9, p99,
                p99 * 2, p99 * 3, prep, prep * 4, post, post * 2, avg - prep - post, p99 - 1, mismatches, null, null,
                null, null, null);
    }

    private static List<BenchRow> rows(boolean check) {
        Long m = check ? 0L : null;
        return List.of(row(4096, 1, 1000, 0.5, 48.5, 101.0, 1.25, 7.5, m),
                row(1 << 20, 4, 64, 0.25, 3900.1, 5000.0, 1.5, 9.25, m));
    }

    @Test
    void tableStartsWithNixlbenchsColumnsThenTheLatencyDistribution() {
        String[] lines = new BenchTable(false, false).render(rows(false)).split("\n");
        assertThat(lines[0].split("\\s{2,}")).containsExactly("Block Size (B)", "Batch Size", "B/W (GB/Sec)",
                "Avg Lat. (us)", "Avg Prep (us)", "P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "P50 Lat. (us)",
                "P99 Lat. (us)", "P99.9 Lat. (us)", "Max Lat. (us)");
        assertThat(lines).hasSize(5);
        assertThat(lines[1]).matches("-+").hasSize(lines[0].length() + "Max Lat. (us)".length() - 13 + 2);
        assertThat(lines[2].split("\\s+")).containsExactly("4096", "1", "0.008192", "48.5", "1.25", "5.00", "7.50",
                "15.00", "43.7", "101.0", "202.0", "303.0");
        assertThat(lines[3].split("\\s+")).containsExactly("1048576", "4", "1.073742", "3900.1", "1.50", "6.00", "9.25",
                "18.50", "3510.1", "5000.0", "10000.0", "15000.0");
        // columns line up under their titles
        assertThat(lines[2].indexOf("0.008192")).isEqualTo(lines[0].indexOf("B/W"));
        assertThat(lines[2].indexOf("303.0")).isEqualTo(lines[0].indexOf("Max Lat."));
        assertThat(lines[4]).isEqualTo(lines[1]);
    }

    @Test
    void headerLineNamesTheRun() {
        BenchReport report = new BenchReport("dev", BenchReport.Settings.of(settings(false), null), rows(false));
        assertThat(report.header()).contains("write dram over loopback (embedded)", "2 channels", "512K chunks")
                .doesNotContain("threads", "in flight");
        BenchSettings mixed = new BenchSettings(TransportKind.LOOPBACK, BenchSettings.Mode.EMBEDDED,
                BenchSettings.Op.READ, MemoryKind.VRAM, MemoryKind.DRAM, List.of(4096L), List.of(1), 0, -1, 1, true,
                false, 8, 512 * 1024, null, false, false, 4, 2);
        String header = new BenchReport("dev", BenchReport.Settings.of(mixed, null).withChannels(1), List.of()).header();
        assertThat(header).contains("read vram -> dram over loopback", "1 channel (8 asked)", "4 threads",
                "2 transfers in flight per thread");
        assertThat(new BenchReport("dev", BenchReport.Settings.of(settings(false), null).withIoThreads(0), List.of())
                .header()).contains("-driven progress, 0 loopback I/O threads");
    }

    @Test
    void rawBaselineAddsItsColumnsAndTheRatioToTableAndJson() throws Exception {
        List<BenchRow> rows = List.of(rows(false).get(0).withRaw(new RawBaseline.Result(0.08, 30.24, 41.5, 812.75)), rows(false).get(1));
        String[] lines = new BenchTable(false, true).render(rows).split("\n");
        assertThat(lines[0]).endsWith("Raw B/W (GB/Sec)   Raw Lat. (us)   x Raw B/W");
        assertThat(List.of(lines[2].split("\\s+")).subList(12, 15)).containsExactly("0.080000", "30.2", "0.10");
        assertThat(lines[2].indexOf("0.080000")).isEqualTo(lines[0].indexOf("Raw B/W"));
        // a row without a baseline leaves the raw cells empty
        assertThat(lines[3].split("\\s+")).hasSize(12);
        BenchReport report = new BenchReport("dev", BenchReport.Settings.of(settings(false), null), rows);
        JsonNode first = new ObjectMapper().readTree(report.toJson()).get("rows").get(0);
        assertThat(first.get("rawGbps").asDouble()).isEqualTo(0.08);
        assertThat(first.get("rawAvgLatencyUs").asDouble()).isEqualTo(30.24);
        assertThat(first.get("rawP99LatencyUs").asDouble()).isEqualTo(41.5);
        assertThat(first.get("rawMaxLatencyUs").asDouble()).isEqualTo(812.75);
        assertThat(first.get("xRaw").asDouble()).isCloseTo(0.1024, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(new ObjectMapper().readTree(report.toJson()).get("rows").get(1).has("xRaw")).isFalse();
    }

    @Test
    void checkedTableAddsAMismatchColumn() {
        String[] lines = new BenchTable(true, false).render(rows(true)).split("\n");
        assertThat(lines[0]).endsWith("Mismatches");
        assertThat(lines[2].split("\\s+")).hasSize(13).endsWith("0");
        BenchReport report = new BenchReport("dev", BenchReport.Settings.of(settings(true), null), rows(true));
        assertThat(report.mismatches()).isZero();
    }

    @Test
    void nixlbenchFormatIsParsedByTheExpressionsForNixlbenchsTable() {
        String[] lines = new NixlbenchTable(1).render(rows(false)).split("\n", -1);
        assertThat(lines[0]).matches(NIXLBENCH_HEADER);
        // nixlbench's fields: 20 characters for the block size, 15 for every other column
        for (String title : new String[] {"Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)", "P99 Tx (us)"}) {
            assertThat(lines[0].indexOf(title)).isEqualTo(20 + 15 * (List.of(NixlbenchTable.TITLES).indexOf(title) - 1));
        }
        assertThat(lines[0]).hasSize(20 + 15 * 9);
        assertThat(lines[1]).isEqualTo("-".repeat(160));
        Matcher m = NIXLBENCH_ROW.matcher(lines[2]);
        assertThat(m.matches()).as(lines[2]).isTrue();
        assertThat(m.group(1)).isEqualTo("4096");
        assertThat(m.group(2)).isEqualTo("1");
        assertThat(m.group(3)).isEqualTo("0.008192");
        // nixlbench's Avg Lat.: the row's wall time per transfer per thread per descriptor
        assertThat(m.group(4)).isEqualTo("500.0");
        assertThat(List.of(m.group(5), m.group(6), m.group(7), m.group(8), m.group(9), m.group(10)))
                .containsExactly("1.3", "5.0", "7.5", "15.0", "39.8", "100.0");
        Matcher second = NIXLBENCH_ROW.matcher(lines[3]);
        assertThat(second.matches()).as(lines[3]).isTrue();
        assertThat(second.group(4)).isEqualTo(String.format(java.util.Locale.ROOT, "%.1f", 0.25e6 / (64 * 4)));
        assertThat(lines[3].indexOf("1.073742")).isEqualTo(35);
        assertThat(lines).hasSize(5).endsWith("");
        // our own table's rows are not nixlbench's: the expression tells them apart
        assertThat(NIXLBENCH_ROW.matcher(new BenchTable(false, false).line(rows(false).get(0)).strip()).matches())
                .isFalse();
    }

    @Test
    void nixlbenchsAverageLatencyCountsTransfersPerThread() {
        Matcher m = NIXLBENCH_ROW.matcher(new NixlbenchTable(4).line(rows(false).get(0)).stripTrailing());
        assertThat(m.matches()).isTrue();
        assertThat(m.group(4)).isEqualTo("2000.0"); // 0.5 s over 250 transfers of 1 descriptor per thread
    }

    @Test
    void csvHasTheJsonNamesAndOneLinePerRow() {
        String[] lines = new BenchCsv(true, true).render(List.of(rows(true).get(0).withRaw(new RawBaseline.Result(0.08, 30.24, 41.5, 812.75)),
                rows(true).get(1))).split("\n");
        assertThat(lines).hasSize(3);
        assertThat(lines[0]).isEqualTo("blockSize,batchSize,iterations,bytes,seconds,gbps,avgLatencyUs,p50LatencyUs,"
                + "p99LatencyUs,p999LatencyUs,maxLatencyUs,avgPrepUs,p99PrepUs,avgPostUs,p99PostUs,avgTxUs,p99TxUs,"
                + "mismatches,rawGbps,rawAvgLatencyUs,xRaw,rawP99LatencyUs,rawMaxLatencyUs");
        assertThat(lines[1].split(",", -1)).hasSize(23).startsWith("4096", "1", "1000", "4096000", "0.500000",
                "0.008192", "48.500");
        assertThat(lines[1]).endsWith(",0,0.080000,30.240,0.102400,41.500,812.750");
        assertThat(lines[2]).endsWith(",0,,,,,");
    }

    @Test
    void jsonHasNumbersAsNumbersAndTheAgreedChannels() throws Exception {
        BenchSettings fixed = new BenchSettings(TransportKind.LOOPBACK, BenchSettings.Mode.INITIATOR,
                BenchSettings.Op.WRITE, MemoryKind.DRAM, MemoryKind.VRAM, List.of(4096L), List.of(1), 50, 5, 0, false,
                false, 8, 512 * 1024, null, false, false, 2, 3);
        JsonNode s = new ObjectMapper().readTree(new BenchReport("dev",
                BenchReport.Settings.of(fixed, "10.0.0.2:7117").withChannels(1).withIoThreads(0), rows(false)).toJson())
                .get("settings");
        assertThat(s.get("iterations").isInt()).isTrue();
        assertThat(s.get("iterations").asInt()).isEqualTo(50);
        assertThat(s.get("warmup").isInt()).isTrue();
        assertThat(s.get("warmup").asInt()).isEqualTo(5);
        assertThat(s.get("channels").asInt()).isEqualTo(1);
        assertThat(s.get("channelsRequested").asInt()).isEqualTo(8);
        assertThat(s.get("threads").asInt()).isEqualTo(2);
        assertThat(s.get("pipelineDepth").asInt()).isEqualTo(3);
        assertThat(s.get("ioThreads").isInt()).isTrue();
        assertThat(s.get("ioThreads").asInt()).isZero();
        assertThat(s.get("initiatorMem").asText()).isEqualTo("dram");
        assertThat(s.get("targetMem").asText()).isEqualTo("vram");
        assertThat(s.has("mem")).as("the sides differ").isFalse();
    }

    @Test
    void jsonParsesBackWithEveryRowAndTheSettings() throws Exception {
        BenchReport report = new BenchReport("dev", BenchReport.Settings.of(settings(false), "10.0.0.2:7117"), rows(false));
        JsonNode doc = new ObjectMapper().readTree(report.toJson());
        assertThat(doc.get("tool").asText()).isEqualTo("tcpx4j bench");
        assertThat(doc.get("version").asText()).isEqualTo("dev");
        JsonNode s = doc.get("settings");
        assertThat(s.get("transport").asText()).isEqualTo("loopback");
        assertThat(s.get("mode").asText()).isEqualTo("embedded");
        assertThat(s.get("op").asText()).isEqualTo("write");
        assertThat(s.get("mem").asText()).isEqualTo("dram");
        assertThat(s.get("blockSizes").size()).isEqualTo(2);
        assertThat(s.has("iterations")).as("scaled per row: each row has its own").isFalse();
        assertThat(s.get("channels").asInt()).isEqualTo(2);
        assertThat(s.get("peer").asText()).isEqualTo("10.0.0.2:7117");
        assertThat(doc.get("rows").size()).isEqualTo(2);
        JsonNode r = doc.get("rows").get(1);
        assertThat(r.get("blockSize").asLong()).isEqualTo(1 << 20);
        assertThat(r.get("batchSize").asInt()).isEqualTo(4);
        assertThat(r.get("iterations").isInt()).isTrue();
        assertThat(r.get("gbps").asDouble()).isEqualTo(1.073741824);
        assertThat(r.get("avgLatencyUs").asDouble()).isEqualTo(3900.1);
        assertThat(r.get("p99LatencyUs").asDouble()).isEqualTo(5000.0);
        assertThat(r.get("p999LatencyUs").asDouble()).isEqualTo(10000.0);
        assertThat(r.get("maxLatencyUs").asDouble()).isEqualTo(15000.0);
        assertThat(r.get("avgPrepUs").asDouble()).isEqualTo(1.5);
        assertThat(r.get("p99PrepUs").asDouble()).isEqualTo(6.0);
        assertThat(r.get("avgPostUs").asDouble()).isEqualTo(9.25);
        assertThat(r.get("p99PostUs").asDouble()).isEqualTo(18.5);
        assertThat(r.has("mismatches")).isFalse();
        assertThat(doc.has("mismatches")).isFalse();
    }
}
