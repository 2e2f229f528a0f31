package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.api.MemoryKind;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BenchReportTest {

    private static BenchSettings settings(boolean check) {
        return new BenchSettings(TransportKind.LOOPBACK, BenchSettings.Mode.EMBEDDED, BenchSettings.Op.WRITE,
                MemoryKind.DRAM, List.of(4096L, 1L << 20), List.of(1, 4), 0, -1, 1, check, 2, 512 * 1024, null, true,
                false);
    }

    private static List<BenchRow> rows(boolean check) {
        Long m = check ? 0L : null;
        return List.of(new BenchRow(4096, 1, 1000, 4096000, 0.5, 0.008192, 48.5, 101.0, 1.25, 7.5, m),
                new BenchRow(1 << 20, 4, 64, 268435456, 0.25, 1.073741824, 3900.1, 5000.0, 1.5, 9.25, m));
    }

    @Test
    void tableHasTheNixlbenchColumnsAndOneLinePerRow() {
        BenchReport report = new BenchReport("dev", BenchReport.Settings.of(settings(false), null), rows(false));
        String[] lines = report.toTable().split("\n");
        assertThat(lines[0]).contains("Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)", "P99 Lat. (us)",
                "Avg Prep (us)", "Avg Post (us)").doesNotContain("Mismatches");
        assertThat(lines).hasSize(5);
        assertThat(lines[1]).matches("-+");
        assertThat(lines[2].split("\\s+")).containsExactly("4096", "1", "0.008192", "48.5", "101.0", "1.25", "7.50");
        assertThat(lines[3].split("\\s+")).containsExactly("1048576", "4", "1.073742", "3900.1", "5000.0", "1.50", "9.25");
        // columns line up under their headers
        assertThat(lines[2].indexOf("0.008192")).isEqualTo(lines[0].indexOf("B/W"));
        assertThat(report.header()).contains("write dram over loopback (embedded)", "2 channels", "512K chunks");
    }

    @Test
    void rawBaselineAddsItsColumnsAndTheRatioToTableAndJson() throws Exception {
        List<BenchRow> rows = List.of(rows(false).get(0).withRaw(0.08, 30.24), rows(false).get(1));
        BenchReport report = new BenchReport("dev", BenchReport.Settings.of(settings(false), null), rows);
        String[] lines = report.toTable().split("\n");
        assertThat(lines[0]).endsWith("Raw B/W (GB/Sec)   Raw Lat. (us)   x Raw B/W");
        assertThat(lines[2].split("\\s+")).containsExactly("4096", "1", "0.008192", "48.5", "101.0", "1.25", "7.50",
                "0.080000", "30.2", "0.10");
        assertThat(lines[2].indexOf("0.080000")).isEqualTo(lines[0].indexOf("Raw B/W"));
        // a row without a baseline leaves the raw cells empty
        assertThat(lines[3].split("\\s+")).hasSize(7);
        JsonNode first = new ObjectMapper().readTree(report.toJson()).get("rows").get(0);
        assertThat(first.get("rawGbps").asDouble()).isEqualTo(0.08);
        assertThat(first.get("rawAvgLatencyUs").asDouble()).isEqualTo(30.24);
        assertThat(first.get("xRaw").asDouble()).isCloseTo(0.1024, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(new ObjectMapper().readTree(report.toJson()).get("rows").get(1).has("xRaw")).isFalse();
    }

    @Test
    void checkedTableAddsAMismatchColumn() {
        BenchReport report = new BenchReport("dev", BenchReport.Settings.of(settings(true), null), rows(true));
        String[] lines = report.toTable().split("\n");
        assertThat(lines[0]).endsWith("Mismatches");
        assertThat(lines[2].split("\\s+")).hasSize(8).endsWith("0");
        assertThat(report.mismatches()).isZero();
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
        assertThat(s.get("iterations").asText()).isEqualTo("auto");
        assertThat(s.get("peer").asText()).isEqualTo("10.0.0.2:7117");
        assertThat(doc.get("rows").size()).isEqualTo(2);
        JsonNode r = doc.get("rows").get(1);
        assertThat(r.get("blockSize").asLong()).isEqualTo(1 << 20);
        assertThat(r.get("batchSize").asInt()).isEqualTo(4);
        assertThat(r.get("gbps").asDouble()).isEqualTo(1.073741824);
        assertThat(r.get("avgLatencyUs").asDouble()).isEqualTo(3900.1);
        assertThat(r.get("p99LatencyUs").asDouble()).isEqualTo(5000.0);
        assertThat(r.get("avgPrepUs").asDouble()).isEqualTo(1.5);
        assertThat(r.get("avgPostUs").asDouble()).isEqualTo(9.25);
        assertThat(r.has("mismatches")).isFalse();
        assertThat(doc.has("mismatches")).isFalse();
    }
}
