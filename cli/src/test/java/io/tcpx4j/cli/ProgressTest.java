package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class ProgressTest {

    @Test
    void drawsInPlaceAndClearsAtTheEnd() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Progress p = new Progress(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        p.start(200);
        p.advance(100, "4K x 1");
        p.advance(50, "4K x 1"); // within 100 ms: not redrawn
        String drawn = bytes.toString(StandardCharsets.UTF_8);
        assertThat(drawn).startsWith("\r[" + "#".repeat(15) + " ".repeat(15) + "] 50% 4K x 1").doesNotContain("75%");
        p.finish();
        assertThat(bytes.toString(StandardCharsets.UTF_8)).endsWith("\r\u001b[K");
    }

    @Test
    void withoutATerminalNothingIsDrawn() {
        // surefire's forked JVM has no console, like a pipe or CI
        assertThat(System.console()).isNull();
        assertThat(Progress.forConsole(System.err).visible()).isFalse();
        assertThat(Progress.none().visible()).isFalse();
        assertThat(new Progress(System.err).visible()).isTrue();
    }
}
