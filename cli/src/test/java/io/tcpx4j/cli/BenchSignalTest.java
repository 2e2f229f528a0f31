package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * SIGINT and SIGTERM during {@code tcpx4j bench}, sent to a real child process: the rows finished so
 * far are printed (valid JSON with {@code --json}) and the exit code is the signal's.
 */
@Timeout(120)
class BenchSignalTest {

    /** Whether this process ignores SIGINT (a child would inherit that, and the JVM keeps it ignored). */
    private static boolean sigintIgnored() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(l.substring(7).trim(), 16) & 0x2) != 0;
            }
        }
        return false;
    }

    @ParameterizedTest
    @CsvSource({"INT, 130, true", "TERM, 143, true", "INT, 130, false"})
    void aSignalMidRunPrintsTheFinishedRowsAndExitsWithTheSignalsCode(String signal, int exit, boolean json)
            throws Exception {
        assumeFalse(signal.equals("INT") && sigintIgnored(), "SIGINT is ignored in this process and its children");
        String java = ProcessHandle.current().info().command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                // the first row (16 MiB) takes a second or two; the second (128 GiB) would take minutes
                "bench", "-v", "--block-sizes", "4K,32M", "--iterations", "4000", "--warmup", "0",
                "--chunk-size", "64K"));
        if (json) {
            cmd.add("--json");
        }
        Process p = new ProcessBuilder(cmd).start();
        try {
            CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            List<String> err = new ArrayList<>();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    err.add(l);
                    if (l.contains("bench row 1 of 2 done")) {
                        break;
                    }
                }
                assertThat(err).as("stderr before the signal").anyMatch(l2 -> l2.contains("bench row 1 of 2 done"));
                new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start().waitFor();
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("exited after SIG" + signal).isTrue();
                while ((l = r.readLine()) != null) {
                    err.add(l);
                }
            }
            assertThat(p.exitValue()).as(String.join("\n", err)).isEqualTo(exit);
            assertThat(err).anyMatch(l -> l.equals("tcpx4j: bench interrupted: 1 of 2 rows finished"));
            String stdout = out.get(10, TimeUnit.SECONDS);
            if (json) {
                JsonNode doc = new ObjectMapper().readTree(stdout);
                assertThat(doc.get("interrupted").asBoolean()).isTrue();
                assertThat(doc.get("rows").size()).isEqualTo(1);
                assertThat(doc.get("rows").get(0).get("blockSize").asLong()).isEqualTo(4096);
                assertThat(doc.get("rows").get(0).get("iterations").asInt()).isEqualTo(4000);
            } else {
                String[] lines = stdout.split("\n");
                assertThat(lines[0]).startsWith("tcpx4j bench: write dram over loopback (embedded)");
                assertThat(lines).hasSize(2 + 1 + 1 + 1);
                assertThat(lines[3].trim().split("\\s+")[0]).isEqualTo("4096");
            }
        } finally {
            p.destroyForcibly();
        }
    }

    private static String read(java.io.InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
