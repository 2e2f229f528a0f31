package io.tcpx4j.cli;

import java.io.PrintStream;
import java.util.Map;
import java.util.Objects;

/**
 * The process's surroundings as commands see them, injectable for tests: output streams and the
 * environment.
 *
 * @param out standard output (results only: the table, the JSON document, the doctor report)
 * @param err standard error (errors, progress, log lines)
 * @param env environment variables
 */
record Io(PrintStream out, PrintStream err, Map<String, String> env) {

    Io {
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(err, "err");
        env = Map.copyOf(env);
    }

    static Io system() {
        return new Io(System.out, System.err, System.getenv());
    }
}
