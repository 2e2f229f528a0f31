package io.tcpx4j.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CUDA probe leaves no file in the temporary directory, with or without a GPU: JCuda extracts its
 * native library there. Runs the probe in a child JVM whose java.io.tmpdir is a fresh directory (the
 * probe runs once per process, and this one may have run it already).
 */
class CudaTempFilesTest {

    /** The child JVM: probes, prints the answer. */
    public static void main(String[] args) {
        System.out.println("available=" + Cuda.isAvailable());
    }

    @Test
    void theProbeLeavesNothingInTheTemporaryDirectory(@TempDir Path tmp) throws Exception {
        Path jvm = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(jvm.toString(), "-Djava.io.tmpdir=" + tmp, "-cp",
                System.getProperty("java.class.path"), CudaTempFilesTest.class.getName())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).as("the probe ran").contains("available=");
        List<Path> left;
        try (Stream<Path> s = Files.list(tmp)) {
            left = s.toList();
        }
        assertThat(left).as(out).isEmpty();
    }
}
