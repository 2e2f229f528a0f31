package io.tcpx4j.it.gpu;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link GpuPairBench}'s two-process plumbing (child JVM, conn-info and metadata over its
 * stdin/stdout, notification echo, checksums, raw TCP) on host memory, so that CI checks what the
 * GPU runs rely on. Tiny sizes: this is no measurement.
 */
class GpuPairBenchPlumbingTest {

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void writeReadAndRawRoundsRunVerifiedBetweenTwoProcesses(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("pair.jsonl");
        GpuPairBench.run("--kind", "DRAM", "--sizes", "4K,1M", "--reps", "1", "--bytes-per-rep", "2M",
                "--warmup-seconds", "0", "--out", out.toString());

        List<String> lines = Files.readAllLines(out);
        assertThat(lines).hasSize(6);
        assertThat(lines).allSatisfy(l -> assertThat(l).contains("\"verified\":true"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("\"op\":\"WRITE\"").contains("\"bytes\":1048576"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("\"op\":\"READ\"").contains("\"bytes\":4096"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("\"system\":\"raw-tcp-4\""));
    }
}
