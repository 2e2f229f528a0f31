package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link OobOptions#pingInterval(Duration)}: keep-alives well inside the shorter of both sides' timeouts. */
class OobOptionsTest {

    private static OobOptions timeout(Duration d) {
        OobOptions o = new OobOptions();
        o.timeout = d;
        return o;
    }

    @Test
    void aQuarterOfTheShorterTimeoutAtMostOneSecond() {
        OobOptions thirty = timeout(Duration.ofSeconds(30));
        assertThat(thirty.pingInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(thirty.pingInterval(null)).as("peer's timeout unknown").isEqualTo(Duration.ofSeconds(1));
        assertThat(thirty.pingInterval(Duration.ofMillis(800))).isEqualTo(Duration.ofMillis(200));
        assertThat(thirty.pingInterval(Duration.ofMinutes(2))).isEqualTo(Duration.ofSeconds(1));

        OobOptions halfSecond = timeout(Duration.ofMillis(500));
        assertThat(halfSecond.pingInterval()).isEqualTo(Duration.ofMillis(125));
        assertThat(halfSecond.pingInterval(Duration.ofSeconds(30))).as("our own is the shorter")
                .isEqualTo(Duration.ofMillis(125));
    }
}
