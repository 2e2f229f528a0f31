package io.tcpx4j.domain.idle;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link CpuPressure}: the share of an interval in which some task waited for a CPU, from a scripted total and
 * a hand-driven clock, and the kernel's file where this host has one.
 */
class CpuPressureTest {

    private long now = 5_000_000_000L;
    private long stalledMicros = 1_000;

    private CpuPressure pressure() {
        return new CpuPressure(() -> stalledMicros, () -> now);
    }

    /** Moves the clock by one interval during which tasks waited for {@code percent} of it. */
    private void interval(long percent) {
        now += CpuPressure.INTERVAL_NANOS;
        stalledMicros += CpuPressure.INTERVAL_NANOS / 1_000 * percent / 100;
    }

    @Test
    void pressuredOnlyAboveTheShareOfTheLastInterval() {
        CpuPressure p = pressure();
        assertThat(p.pressured()).as("the first read only starts the count").isFalse();
        interval(CpuPressure.PRESSURED_PERCENT);
        assertThat(p.pressured()).as("at the threshold").isFalse();
        interval(CpuPressure.PRESSURED_PERCENT + 1);
        assertThat(p.pressured()).isTrue();
        interval(80);
        assertThat(p.pressured()).isTrue();
        interval(0);
        assertThat(p.pressured()).as("the pressure has gone").isFalse();
    }

    @Test
    void readsAtMostOnceAnIntervalAndKeepsTheLastAnswerMeanwhile() {
        CpuPressure p = pressure();
        p.pressured();
        interval(50);
        assertThat(p.pressured()).isTrue();
        stalledMicros += 1; // no more stalls, but within the interval the file is not read again
        now += CpuPressure.INTERVAL_NANOS - 1;
        assertThat(p.pressured()).isTrue();
        now += 1;
        assertThat(p.pressured()).as("an interval of almost no stalls").isFalse();
    }

    @Test
    void theShareIsOfTheTimeSinceTheLastReadHoweverLongAgo() {
        CpuPressure p = pressure();
        p.pressured();
        now += 100 * CpuPressure.INTERVAL_NANOS;
        stalledMicros += CpuPressure.INTERVAL_NANOS / 1_000; // a whole interval's worth over a hundred
        assertThat(p.pressured()).isFalse();
    }

    @Test
    void withoutTheFileTheHostIsNeverPressured() {
        long[] calls = {0};
        CpuPressure p = new CpuPressure(() -> {
            calls[0]++;
            return -1;
        }, () -> now);
        assertThat(p.pressured()).isFalse();
        now += 10 * CpuPressure.INTERVAL_NANOS;
        assertThat(p.pressured()).isFalse();
        assertThat(calls[0]).as("not asked again").isEqualTo(1);
    }

    @Test
    void theTotalIsTakenFromTheSomeLine() {
        assertThat(parse("some avg10=1.50 avg60=0.14 avg300=1.49 total=13491737\n"
                + "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")).isEqualTo(13_491_737L);
        assertThat(parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")).isZero();
        assertThat(parse("some avg10=0.00 avg60=0.00 avg300=0.00\nfull total=7\n")).as("not the next line's").isEqualTo(-1);
        assertThat(parse("some totaltotal=42")).isEqualTo(42);
        assertThat(parse("some total=")).isEqualTo(-1);
        assertThat(parse("")).isEqualTo(-1);
    }

    @Test
    void theKernelsTotalGrowsWhereLinuxKeepsIt() {
        assumeTrue(Files.isReadable(Path.of("/proc/pressure/cpu")), "no CPU pressure information here");
        long first = CpuPressure.readSomeMicros();
        long second = CpuPressure.readSomeMicros();
        assertThat(first).isNotNegative();
        assertThat(second).isGreaterThanOrEqualTo(first);
    }

    private static long parse(String text) {
        return CpuPressure.parseSomeTotal(ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)));
    }
}
