package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class JitQuietTest {

    private static final long MS = 1_000_000L;

    @Test
    void quietOnlyOnceTheTotalHasStayedTheSameForTheWholeWindow() {
        AtomicLong total = new AtomicLong(100);
        JitQuiet jit = new JitQuiet(total::get);
        assertThat(jit.quietFor(300 * MS, 0)).as("first look").isFalse();
        assertThat(jit.quietFor(300 * MS, 299 * MS)).isFalse();
        assertThat(jit.quietFor(300 * MS, 300 * MS)).isTrue();

        total.set(101);
        assertThat(jit.quietFor(300 * MS, 400 * MS)).as("a compilation ended").isFalse();
        assertThat(jit.quietFor(300 * MS, 650 * MS)).isFalse();
        assertThat(jit.quietFor(300 * MS, 700 * MS)).isTrue();
    }

    @Test
    void aJvmThatKeepsNoCompilationTimeCountsAsQuiet() {
        assertThat(new JitQuiet(null).quietFor(300 * MS, 0)).isTrue();
    }

    @Test
    void thisJvmReportsItsCompilers() {
        JitQuiet jit = JitQuiet.ofThisJvm();
        assertThat(jit.quietFor(0, System.nanoTime())).as("first look notes the total").isFalse();
    }
}
