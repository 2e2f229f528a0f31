package io.tcpx4j.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** What -v shows, and the shape of a log line. */
class LogsTest {

    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final PrintStream stream = new PrintStream(err, true, StandardCharsets.UTF_8);

    @AfterEach
    void quiet() {
        Logs.configure(false, System.err);
    }

    @Test
    void verboseShowsTcpx4jsOwnLoggersAtDebugAndNotTheInjectorsInternals() {
        Logs.configure(true, stream);
        System.getLogger("io.tcpx4j.domain.Engine").log(System.Logger.Level.DEBUG, "engine says {0}", "hello");
        java.util.logging.Logger.getLogger("com.google.inject.internal.util.ContinuousStopwatch")
                .fine("Module execution: 12ms");
        java.util.logging.Logger.getLogger("com.google.inject.Guice").warning("a real problem");

        assertThat(System.getLogger("io.tcpx4j.cli.Node").isLoggable(System.Logger.Level.DEBUG)).isTrue();
        assertThat(System.getLogger("com.google.inject.Injector").isLoggable(System.Logger.Level.DEBUG)).isFalse();
        assertThat(err.toString(StandardCharsets.UTF_8).split("\\R")).containsExactly(
                "tcpx4j: debug: engine says hello (io.tcpx4j.domain.Engine)",
                "tcpx4j: warning: a real problem (com.google.inject.Guice)");
    }

    @Test
    void withoutVerboseOnlyWarningsShowOneLineEach() {
        Logs.configure(false, stream);
        System.getLogger("io.tcpx4j.domain.Engine").log(System.Logger.Level.DEBUG, "not shown");
        System.getLogger("io.tcpx4j.domain.Connection").log(System.Logger.Level.WARNING,
                "connection to peer closed:\n  gone", new IllegalStateException("why"));

        assertThat(err.toString(StandardCharsets.UTF_8).split("\\R")).containsExactly(
                "tcpx4j: warning: connection to peer closed: gone (io.tcpx4j.domain.Connection):"
                        + " java.lang.IllegalStateException: why");
    }

    @Test
    void heldRecordsPrintOnReleaseAndVanishOnDiscard() {
        Logs.configure(false, stream);
        Logs.Held held = Logs.hold();
        System.getLogger("io.tcpx4j.domain.Connection").log(System.Logger.Level.WARNING, "first");
        assertThat(err.size()).isZero();
        held.release();
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("first");

        err.reset();
        Logs.Held dropped = Logs.hold();
        System.getLogger("io.tcpx4j.domain.Connection").log(System.Logger.Level.WARNING, "second");
        dropped.discard();
        System.getLogger("io.tcpx4j.domain.Connection").log(System.Logger.Level.WARNING, "third");
        assertThat(err.toString(StandardCharsets.UTF_8)).doesNotContain("second").contains("third");
    }
}
