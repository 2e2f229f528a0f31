package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class ProgressTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void theBarIsWeightedByTransfersAndClearsAtTheEnd() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        AtomicLong now = new AtomicLong(SECOND);
        Progress p = Progress.bar(new PrintStream(bytes, true, StandardCharsets.UTF_8), now::get);
        p.start(200);
        p.phase("row 1 of 2: 4K x 1");
        p.advance(100);
        now.addAndGet(SECOND / 20);
        p.advance(50); // within 100 ms: not redrawn
        String drawn = bytes.toString(StandardCharsets.UTF_8);
        assertThat(drawn).startsWith("\r[" + "#".repeat(15) + " ".repeat(15) + "] 50% row 1 of 2: 4K x 1")
                .doesNotContain("75%");
        now.addAndGet(SECOND / 10);
        p.advance(10); // 100 ms after the last draw: redrawn
        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("] 80% row 1 of 2");
        p.finish();
        assertThat(bytes.toString(StandardCharsets.UTF_8)).endsWith("\r\u001b[K");
    }

    @Test
    void onAPipeOneLinePerIntervalWhileARowRuns() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        AtomicLong now = new AtomicLong(100 * SECOND);
        Progress p = Progress.lines(new PrintStream(bytes, true, StandardCharsets.UTF_8), 5 * SECOND, now::get);
        p.start(1000);
        p.phase("row 2 of 8: 16K x 1");
        for (int i = 0; i < 400; i++) {
            now.addAndGet(SECOND / 20); // 20 transfers a second: 20 s in all
            p.advance(1);
        }
        p.finish();
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).containsExactly(
                "tcpx4j bench: row 2 of 8: 16K x 1: 100 transfers in 5 s, 10% of the run",
                "tcpx4j bench: row 2 of 8: 16K x 1: 200 transfers in 10 s, 20% of the run",
                "tcpx4j bench: row 2 of 8: 16K x 1: 300 transfers in 15 s, 30% of the run",
                "tcpx4j bench: row 2 of 8: 16K x 1: 400 transfers in 20 s, 40% of the run");
        assertThat(bytes.toString(StandardCharsets.UTF_8)).doesNotContain("\r", "\u001b");
    }

    @Test
    void aRowShorterThanTheIntervalPrintsNothing() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        AtomicLong now = new AtomicLong();
        Progress p = Progress.lines(new PrintStream(bytes, true, StandardCharsets.UTF_8), 5 * SECOND, now::get);
        p.start(10);
        p.phase("row 1 of 1: 4K x 1");
        now.addAndGet(4 * SECOND);
        p.advance(10);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void withoutATerminalItPrintsLinesNotABar() {
        // surefire's forked JVM has no console, like a pipe or CI
        assertThat(System.console()).isNull();
        assertThat(Progress.forConsole(System.err, SECOND).visible()).isFalse();
        assertThat(Progress.none().visible()).isFalse();
        assertThat(Progress.bar(System.err).visible()).isTrue();
    }
}
