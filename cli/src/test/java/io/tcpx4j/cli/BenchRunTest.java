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
            assertThat(cells).hasSize(11);
            assertThat(Double.parseDouble(cells[2])).as("GB/s of " + lines[i]).isPositive();
            assertThat(Double.parseDouble(cells[3])).as("avg latency").isPositive();
            assertThat(cells[7]).as("mismatches").isEqualTo("0");
            assertThat(Double.parseDouble(cells[8])).as("raw GB/s of " + lines[i]).isPositive();
            assertThat(Double.parseDouble(cells[9])).as("raw latency").isPositive();
            // the ratio of the two bandwidth columns, to the two decimals printed (a cold first row can be
            // under 0.005 of raw and print 0.00), give or take what the columns' six decimals round away
            // (a slow raw row of a few MB/s leaves a ratio of 27 uncertain in its third decimal)
            double gbps = Double.parseDouble(cells[2]);
            double raw = Double.parseDouble(cells[8]);
            double ratio = gbps / raw;
            double rounding = ratio * (0.5e-6 / gbps + 0.5e-6 / raw);
            assertThat(Double.parseDouble(cells[10])).as("x raw")
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
        assertThat(lines[1]).endsWith("Avg Post (us)");
        assertThat(lines[3].trim().split("\\s+")).hasSize(7);
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
        assertThat(row.trim().split("\\s+")[7]).isEqualTo("1");
    }

    @Test
    void aCorruptedByteFailsTheReadCheckToo() {
        Patterns.beforeVerify = (address, length) -> NativeMemory.putByte(address, (byte) ~NativeMemory.getByte(address));
        Cli.Result r = Cli.run(with("--op", "read", "--check-consistency", "--json"));
        assertThat(r.exit()).isEqualTo(BenchCommand.EXIT_MISMATCH);
        assertThat(r.out()).contains("\"mismatches\" : 6");
    }
}
