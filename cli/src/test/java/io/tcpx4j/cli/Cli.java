package io.tcpx4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Runs the CLI in-process with captured streams. */
final class Cli {

    record Result(int exit, String out, String err) {
        String[] errLines() {
            return err.isEmpty() ? new String[0] : err.split("\\R");
        }
    }

    private Cli() {
    }

    static Result run(String... args) {
        return run(Map.of(), args);
    }

    static Result run(Map<String, String> env, String... args) {
        return run(env, Backends.CUDA, args);
    }

    /** On a host whose GPUs are {@code gpus} (a {@link HostGpusDouble}). */
    static Result run(GpuHost gpus, String... args) {
        return run(Map.of(), gpus, args);
    }

    private static Result run(Map<String, String> env, GpuHost gpus, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Io io = io(out, err, env);
        int exit = Main.commandLine(io, gpus).execute(args);
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static Io io(ByteArrayOutputStream out, ByteArrayOutputStream err, Map<String, String> env) {
        return new Io(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), env);
    }
}
