package io.tcpx4j.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The checked-in PTX is what gen-ptx.sh makes from unpack.cu: regenerated and compared wherever
 * the same nvcc release is installed (skipped where nvcc is absent or another release would emit a
 * different, equally valid body). gen-ptx.sh also assembles the lowered PTX with ptxas, which fails
 * on any instruction newer than PTX 8.2. Without that nvcc, PtxSourceTest still checks the source
 * hash the PTX records.
 */
class PtxRegenerationTest {

    private static final Path MODULE = locateModule();
    private static final Path SCRIPT = MODULE.resolve("src/main/cuda/gen-ptx.sh");
    private static final Path SHIPPED = MODULE.resolve("src/main/resources/io/tcpx4j/cuda/unpack.ptx");

    @Test
    void shippedPtxIsTheRegeneratedOne(@TempDir Path tmp) throws Exception {
        Optional<Path> nvcc = findNvcc();
        assumeTrue(nvcc.isPresent(), "nvcc not found (PATH, NVCC, /usr/local/cuda/bin): cannot regenerate");
        assumeTrue(Files.isRegularFile(SCRIPT) && Files.isRegularFile(SHIPPED), "sources not found under " + MODULE);
        String shipped = Files.readString(SHIPPED, StandardCharsets.US_ASCII);
        String release = release(run(List.of(nvcc.get().toString(), "--version"), tmp).output);
        assumeTrue(shipped.contains("Cuda compilation tools, " + release + ","),
                "nvcc " + release + " differs from the one that generated the shipped PTX");

        Path out = tmp.resolve("unpack.ptx");
        Result gen = run(List.of("sh", SCRIPT.toString(), out.toString()), tmp, "NVCC", nvcc.get().toString());
        assertThat(gen.exit).as("gen-ptx.sh output:\n" + gen.output).isZero();
        assertThat(Files.readString(out, StandardCharsets.US_ASCII))
                .as("src/main/resources/io/tcpx4j/cuda/unpack.ptx is stale: run src/main/cuda/gen-ptx.sh")
                .isEqualTo(shipped);
    }

    private static String release(String versionOutput) {
        Matcher m = Pattern.compile("release [0-9.]+").matcher(versionOutput);
        return m.find() ? m.group() : "unknown release";
    }

    private static Optional<Path> findNvcc() {
        String env = System.getenv("NVCC");
        if (env != null && Files.isExecutable(Path.of(env))) {
            return Optional.of(Path.of(env));
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir, "nvcc");
            if (!dir.isEmpty() && Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        Path standard = Path.of("/usr/local/cuda/bin/nvcc");
        return Files.isExecutable(standard) ? Optional.of(standard) : Optional.empty();
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> command, Path dir, String... env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        for (int i = 0; i < env.length; i += 2) {
            pb.environment().put(env[i], env[i + 1]);
        }
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("finished: " + command).isTrue();
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /** Surefire runs in the module directory; an IDE may run from the repository root. */
    private static Path locateModule() {
        Path here = Path.of("").toAbsolutePath();
        return Files.exists(here.resolve("src/main/cuda")) ? here : here.resolve("cuda-unpack");
    }
}
