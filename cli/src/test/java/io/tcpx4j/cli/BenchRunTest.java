package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Short embedded runs: two engines in this JVM over the loopback transport. */
@Timeout(120)
class BenchRunTest {

    private static final String[] SHORT = {"bench", "--block-sizes", "4K,100K,1M", "--batch-sizes", "1,3",
            "--iterations", "3", "--warmup", "1", "--warmup-seconds", "0.1", "--chunk-size", "64K"};

    @AfterEach
    void noSeam() {
        Patterns.beforeVerify = null;
    }

    private static String[] with(String... more) {
        String[] all = new String[SHORT.length + more.length];
        System.arraycopy(SHORT, 0, all, 0, SHORT.length);
        System.arraycopy(more, 0, all, SHORT.length, more.length);
        return all;
    }

    @Test
    void writeWithConsistencyCheckPassesAndPrintsTheTable() {
        Cli.Result r = Cli.run(with("--check-consistency"));
        assertThat(r.exit()).as(r.err()).isZero();
        String[] lines = r.out().split("\n");
        assertThat(lines[0]).startsWith("tcpx4j bench: write dram over loopback (embedded)");
        assertThat(lines[1]).startsWith("Block Size (B)").contains("Mismatches")
                .endsWith("Raw B/W (GB/Sec)   Raw Lat. (us)   x Raw B/W");
        assertThat(lines).hasSize(2 + 1 + 6 + 1);
        for (int i = 3; i < 9; i++) {
            String[] cells = lines[i].trim().split("\\s+");
            assertThat(cells).hasSize(16);
            assertThat(Double.parseDouble(cells[2])).as("GB/s of " + lines[i]).isPositive();
            assertThat(Double.parseDouble(cells[3])).as("avg latency").isPositive();
            // p50 <= p99 <= p99.9 <= max
            assertThat(Double.parseDouble(cells[8])).isLessThanOrEqualTo(Double.parseDouble(cells[9]));
            assertThat(Double.parseDouble(cells[9])).isLessThanOrEqualTo(Double.parseDouble(cells[10]));
            assertThat(Double.parseDouble(cells[10])).isLessThanOrEqualTo(Double.parseDouble(cells[11]) * 1.001);
            assertThat(cells[12]).as("mismatches").isEqualTo("0");
            assertThat(Double.parseDouble(cells[13])).as("raw GB/s of " + lines[i]).isPositive();
            assertThat(Double.parseDouble(cells[14])).as("raw latency").isPositive();
            // the ratio of the two bandwidth columns, to the two decimals printed (a cold first row can be
            // under 0.005 of raw and print 0.00), give or take what the columns' six decimals round away
            // (a slow raw row of a few MB/s leaves a ratio of 27 uncertain in its third decimal)
            double gbps = Double.parseDouble(cells[2]);
            double raw = Double.parseDouble(cells[13]);
            double ratio = gbps / raw;
            double rounding = ratio * (0.5e-6 / gbps + 0.5e-6 / raw);
            assertThat(Double.parseDouble(cells[15])).as("x raw")
                    .isCloseTo(ratio, org.assertj.core.data.Offset.offset(0.0051 + rounding));
        }
        assertThat(lines[3].trim().split("\\s+")[0]).isEqualTo("4096");
        assertThat(lines[4].trim().split("\\s+")[0]).isEqualTo("102400");
        assertThat(lines[8].trim().split("\\s+")[1]).isEqualTo("3");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void noBaselineLeavesTheRawColumnsOut() {
        Cli.Result r = Cli.run(with("--no-baseline"));
        assertThat(r.exit()).as(r.err()).isZero();
        String[] lines = r.out().split("\n");
        assertThat(lines[1]).endsWith("Max Lat. (us)");
        assertThat(lines[3].trim().split("\\s+")).hasSize(12);
    }

    @Test
    void theWarmUpMovesEveryRowShapeBeforeTheFirstRowUnlessTurnedOff() {
        List<String> log = logOf(() -> assertThat(Cli.run(with("-v", "--no-baseline")).exit()).isZero());
        int warmUp = indexOf(log, "bench warm-up: ");
        assertThat(warmUp).as("%s", log).isNotNegative().isLessThan(indexOf(log, "bench row 1 of 6 done"));
        Matcher m = Pattern.compile("bench warm-up: ([0-9,]+) transfers of 6 row shapes").matcher(log.get(warmUp));
        assertThat(m.find()).as(log.get(warmUp)).isTrue();
        assertThat(Long.parseLong(m.group(1).replace(",", ""))).isGreaterThanOrEqualTo(6);

        String[] noWarmUp = with("-v", "--no-baseline");
        noWarmUp[List.of(noWarmUp).indexOf("--warmup-seconds") + 1] = "0";
        List<String> off = logOf(() -> assertThat(Cli.run(noWarmUp).exit()).isZero());
        assertThat(indexOf(off, "bench warm-up: ")).as("%s", off).isNegative();
        assertThat(indexOf(off, "bench row 1 of 6 done")).as("%s", off).isNotNegative();
    }

    /** The bench runner's log messages while {@code run} runs (-v makes them FINE and visible). */
    private static List<String> logOf(Runnable run) {
        List<String> messages = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(BenchRunner.class.getName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                messages.add(new SimpleFormatter().formatMessage(r));
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        try {
            run.run();
        } finally {
            logger.removeHandler(capture);
        }
        return messages;
    }

    private static int indexOf(List<String> messages, String prefix) {
        for (int i = 0; i < messages.size(); i++) {
            if (messages.get(i).startsWith(prefix)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void readWithConsistencyCheckPassesAsJson() throws Exception {
        Cli.Result r = Cli.run(with("--op", "read", "--check-consistency", "--json", "--channels", "1"));
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode doc = new ObjectMapper().readTree(r.out());
        assertThat(doc.get("settings").get("op").asText()).isEqualTo("read");
        assertThat(doc.get("settings").get("channels").asInt()).isEqualTo(1);
        assertThat(doc.get("settings").get("warmupSeconds").asDouble()).isEqualTo(0.1);
        assertThat(doc.get("rows").size()).isEqualTo(6);
        assertThat(doc.get("mismatches").asLong()).isZero();
        for (JsonNode row : doc.get("rows")) {
            assertThat(row.get("gbps").asDouble()).isPositive();
            assertThat(row.get("iterations").asInt()).isEqualTo(3);
            assertThat(row.get("bytes").asLong()).isEqualTo(3 * row.get("blockSize").asLong() * row.get("batchSize").asLong());
            assertThat(row.get("p99LatencyUs").asDouble()).isGreaterThanOrEqualTo(row.get("avgLatencyUs").asDouble() * 0.5);
            assertThat(row.get("maxLatencyUs").asDouble()).isGreaterThanOrEqualTo(row.get("avgLatencyUs").asDouble())
                    .isGreaterThanOrEqualTo(row.get("p99LatencyUs").asDouble() * 0.99);
            assertThat(row.get("mismatches").asLong()).isZero();
        }
    }

    @Test
    void aCorruptedDestinationByteFailsTheWriteCheck() {
        AtomicInteger flipped = new AtomicInteger();
        Patterns.beforeVerify = (address, length) -> {
            if (length == 100 * 1024 * 3 && flipped.getAndIncrement() == 0) {
                NativeMemory.putByte(address + 12345, (byte) ~NativeMemory.getByte(address + 12345));
            }
        };
        Cli.Result r = Cli.run(with("--check-consistency"));
        assertThat(flipped.get()).isEqualTo(1);
        assertThat(r.exit()).isEqualTo(BenchCommand.EXIT_MISMATCH);
        assertThat(r.err()).contains("consistency check FAILED: 1 destination bytes differ");
        String row = r.out().lines().filter(l -> l.startsWith("102400 ") && l.trim().split("\\s+")[1].equals("3"))
                .findFirst().orElseThrow();
        assertThat(row.trim().split("\\s+")[12]).isEqualTo("1");
    }

    @Test
    void aCorruptedByteFailsTheReadCheckToo() {
        Patterns.beforeVerify = (address, length) -> NativeMemory.putByte(address, (byte) ~NativeMemory.getByte(address));
        Cli.Result r = Cli.run(with("--op", "read", "--check-consistency", "--json"));
        assertThat(r.exit()).isEqualTo(BenchCommand.EXIT_MISMATCH);
        assertThat(r.out()).contains("\"mismatches\" : 6");
    }

    @Test
    void threadsAndPipelineDepthMoveAndCheckEveryByteOfEverySlot() throws Exception {
        for (String op : List.of("write", "read")) {
            String[] args = with("--op", op, "--check-consistency", "--json", "--num-threads", "3",
                    "--pipeline-depth", "4");
            args[List.of(args).indexOf("--iterations") + 1] = "20";
            Cli.Result r = Cli.run(args);
            assertThat(r.exit()).as(r.err()).isZero();
            JsonNode doc = new ObjectMapper().readTree(r.out());
            assertThat(doc.get("settings").get("threads").asInt()).isEqualTo(3);
            assertThat(doc.get("settings").get("pipelineDepth").asInt()).isEqualTo(4);
            assertThat(doc.get("mismatches").asLong()).isZero();
            for (JsonNode row : doc.get("rows")) {
                assertThat(row.get("iterations").asInt()).isEqualTo(20);
                assertThat(row.get("bytes").asLong())
                        .isEqualTo(20 * row.get("blockSize").asLong() * row.get("batchSize").asLong());
                assertThat(row.get("mismatches").asLong()).isZero();
                assertThat(row.get("p999LatencyUs").asDouble()).isGreaterThanOrEqualTo(row.get("p50LatencyUs").asDouble());
            }
        }
    }

    @Test
    void aCorruptedByteInTheLastSlotFailsTheCheckOfAPipelinedRun() {
        AtomicInteger flipped = new AtomicInteger();
        long slots = 2 * 3;
        Patterns.beforeVerify = (address, length) -> {
            // the 100K x 3 row spans every slot: flip a byte in the last one
            if (length == 100 * 1024 * 3 * slots && flipped.getAndIncrement() == 0) {
                long at = address + length - 7;
                NativeMemory.putByte(at, (byte) ~NativeMemory.getByte(at));
            }
        };
        Cli.Result r = Cli.run(with("--check-consistency", "--num-threads", "2", "--pipeline-depth", "3",
                "--no-baseline", "--json"));
        assertThat(flipped.get()).isEqualTo(1);
        // three iterations asked, one per slot made: every slot is written before it is checked
        assertThat(r.out()).contains("\"iterations\" : 6");
        assertThat(r.exit()).isEqualTo(BenchCommand.EXIT_MISMATCH);
        assertThat(r.err()).contains("consistency check FAILED: 1 destination bytes differ");
    }

    @Test
    void nixlbenchFormatRowsParseWithTheExpressionForNixlbenchsRows() {
        Cli.Result r = Cli.run(with("--format", "nixlbench", "--num_threads", "2"));
        assertThat(r.exit()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        int head = lines.indexOf(lines.stream().filter(l -> BenchReportTest.NIXLBENCH_HEADER.matcher(l).matches())
                .findFirst().orElseThrow());
        assertThat(lines.get(head + 1)).isEqualTo("-".repeat(160));
        List<String> rows = lines.subList(head + 2, lines.size());
        assertThat(rows).hasSize(6);
        for (String row : rows) {
            Matcher m = BenchReportTest.NIXLBENCH_ROW.matcher(row);
            assertThat(m.matches()).as(row).isTrue();
            assertThat(Double.parseDouble(m.group(3))).as("B/W of " + row).isPositive();
        }
        assertThat(BenchReportTest.NIXLBENCH_ROW.matcher(rows.get(5)).results().findFirst().orElseThrow().group(2))
                .isEqualTo("3");
        assertThat(r.out()).doesNotContain("Raw B/W").as("no baseline with nixlbench's columns");
    }

    @Test
    void csvIsAHeaderAndOneLinePerRowAndNothingElse() {
        Cli.Result r = Cli.run(with("--csv", "--no-baseline"));
        assertThat(r.exit()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines).hasSize(7);
        assertThat(lines.get(0)).startsWith("blockSize,batchSize,iterations,bytes,seconds,gbps,avgLatencyUs,");
        for (String line : lines.subList(1, 7)) {
            String[] cells = line.split(",", -1);
            assertThat(cells).hasSize(17);
            assertThat(cells[2]).isEqualTo("3");
            assertThat(Double.parseDouble(cells[5])).isPositive();
        }
    }

    @Test
    void separateMemoryKindsPerSideReachTheReport() throws Exception {
        Cli.Result r = Cli.run(with("--json", "--initiator-seg-type", "DRAM", "--target_seg_type", "dram",
                "--check-consistency", "--no-baseline"));
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode s = new ObjectMapper().readTree(r.out()).get("settings");
        assertThat(s.get("initiatorMem").asText()).isEqualTo("dram");
        assertThat(s.get("targetMem").asText()).isEqualTo("dram");
        assertThat(s.get("iterations").isInt()).isTrue();
        assertThat(s.get("channels").asInt()).isEqualTo(2);
    }

    @Test
    void onAPipeARowLongerThanTheReportIntervalPrintsProgressLines() {
        Cli.Result r = Cli.run("bench", "--block-sizes", "4K", "--iterations", "2000", "--warmup", "0",
                "--warmup-seconds", "0", "--no-baseline", "--report-interval", "10ms");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.errLines()).isNotEmpty()
                .allMatch(l -> l.matches("tcpx4j bench: row 1 of 1: 4K x 1: \\d+ transfers in \\d+ s, \\d+% of the run"));
    }
}
