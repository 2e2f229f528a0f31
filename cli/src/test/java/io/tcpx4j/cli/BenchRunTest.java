package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Short embedded runs: two engines in this JVM over the loopback transport. */
@Timeout(120)
class BenchRunTest {

    private static final String[] SHORT = {"bench", "--block-sizes", "4K,100K,1M", "--batch-sizes", "1,3",
            "--iterations", "3", "--warmup", "1", "--chunk-size", "64K"};

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
            // under 0.005 of raw and print 0.00)
            double ratio = Double.parseDouble(cells[2]) / Double.parseDouble(cells[8]);
            assertThat(Double.parseDouble(cells[10])).as("x raw").isCloseTo(ratio, org.assertj.core.data.Offset.offset(0.0051));
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
    void readWithConsistencyCheckPassesAsJson() throws Exception {
        Cli.Result r = Cli.run(with("--op", "read", "--check-consistency", "--json", "--channels", "1"));
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode doc = new ObjectMapper().readTree(r.out());
        assertThat(doc.get("settings").get("op").asText()).isEqualTo("read");
        assertThat(doc.get("settings").get("channels").asInt()).isEqualTo(1);
        assertThat(doc.get("rows").size()).isEqualTo(6);
        assertThat(doc.get("mismatches").asLong()).isZero();
        for (JsonNode row : doc.get("rows")) {
            assertThat(row.get("gbps").asDouble()).isPositive();
            assertThat(row.get("iterations").asInt()).isEqualTo(3);
            assertThat(row.get("bytes").asLong()).isEqualTo(3 * row.get("blockSize").asLong() * row.get("batchSize").asLong());
            assertThat(row.get("p99LatencyUs").asDouble()).isGreaterThanOrEqualTo(row.get("avgLatencyUs").asDouble() * 0.5);
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
