package io.tcpx4j.domain.idle;

import io.tcpx4j.domain.port.out.Clock;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link IdleWait}: spin, then block where only events matter, else parks that double up to a cap. Time is a
 * hand-driven clock: a spin ends, and contention is re-read, only when a test moves it.
 */
class IdleWaitTest {

    /** Nanoseconds on the test's clock; only the test moves it. */
    private long now = 1_000_000_000L;
    private final Clock clock = () -> now;

    /** A host whose CPUs are never under pressure. */
    private static final CpuPressure NO_PRESSURE = new CpuPressure(() -> 0, () -> 0);

    /** A thread that never waits for a CPU, on a host without pressure. */
    private static final CpuContention NEVER_CONTENDED = new CpuContention(into -> {
        into[0] = 0;
        into[1] = 1;
        return true;
    }, NO_PRESSURE);

    /** A scripted thread: {@code c[0]} nanoseconds on a run queue over {@code c[1]} turns on a CPU. */
    private static CpuContention scripted(long[] c) {
        return new CpuContention(into -> {
            into[0] = c[0];
            into[1] = c[1];
            return true;
        }, NO_PRESSURE);
    }

    /** A waiter that answers from a script and counts its calls. */
    private static final class ScriptedWaiter implements IdleWait.Waiter {
        final Deque<Boolean> answers = new ArrayDeque<>();
        int calls;

        @Override
        public boolean awaitEvent() {
            calls++;
            return answers.isEmpty() || answers.poll();
        }
    }

    @Test
    void withoutSpinEveryEmptyCycleAsksToBlock() {
        ScriptedWaiter w = new ScriptedWaiter();
        IdleWait idle = new IdleWait(0, w, NEVER_CONTENDED, clock);
        for (int i = 0; i < 5; i++) {
            idle.idle(0);
        }
        assertThat(w.calls).isEqualTo(5);
        assertThat(idle.lastParkNanos()).isZero();
    }

    @Test
    void whileSpinningItNeverBlocksAndWorkStartsTheSpinAgain() {
        ScriptedWaiter w = new ScriptedWaiter();
        IdleWait idle = new IdleWait(1_000, w, NEVER_CONTENDED, clock);
        for (int i = 0; i < 1000; i++) {
            idle.idle(0);
        }
        now += 999;
        idle.idle(0);
        assertThat(w.calls).as("within the spin").isZero();
        now += 1;
        idle.idle(0);
        assertThat(w.calls).as("the spin has passed").isEqualTo(1);
        idle.idle(0);
        assertThat(w.calls).as("woken for an event: the next empty cycle blocks at once").isEqualTo(2);

        idle.idle(1);
        idle.idle(0);
        now += 999;
        idle.idle(0);
        assertThat(w.calls).as("work started the spin again").isEqualTo(2);
        now += 1;
        idle.idle(0);
        assertThat(w.calls).isEqualTo(3);
    }

    @Test
    void somethingToPollParksDoublingUpToTheCapAndAnEventResetsIt() {
        ScriptedWaiter w = new ScriptedWaiter();
        for (int i = 0; i < 8; i++) {
            w.answers.add(false);
        }
        w.answers.add(true);
        w.answers.add(false);
        IdleWait idle = new IdleWait(0, w, NEVER_CONTENDED, clock);
        long[] parks = new long[10];
        for (int i = 0; i < parks.length; i++) {
            idle.idle(0);
            parks[i] = idle.lastParkNanos();
        }
        assertThat(parks).containsExactly(1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 50_000, 50_000, 0, 1_000);
    }

    @Test
    void workResetsTheParks() {
        ScriptedWaiter w = new ScriptedWaiter();
        w.answers.add(false);
        w.answers.add(false);
        w.answers.add(false);
        IdleWait idle = new IdleWait(0, w, NEVER_CONTENDED, clock);
        idle.idle(0);
        idle.idle(0);
        idle.idle(3);
        assertThat(idle.lastParkNanos()).isZero();
        idle.idle(0);
        assertThat(idle.lastParkNanos()).isEqualTo(1_000);
    }

    @Test
    void aThreadThatWaitedForItsCpuDoesNotSpin() {
        long[] c = {0, 1};
        ScriptedWaiter w = new ScriptedWaiter();
        IdleWait idle = new IdleWait(1_000, w, scripted(c), clock);
        idle.idle(0); // the first look only starts the count
        assertThat(w.calls).as("spinning").isZero();
        // ten turns on a CPU since, each after 100 us on a run queue: contended from the next idle run on
        c[0] = 1_000_000;
        c[1] = 11;
        now += CpuContention.INTERVAL_NANOS - 1;
        idle.idle(1);
        idle.idle(0);
        assertThat(w.calls).as("the counters are not read again within an interval: still spinning").isZero();
        now += 1;
        idle.idle(1);
        idle.idle(0);
        assertThat(w.calls).as("blocked without spinning").isEqualTo(1);
    }

    @Test
    void contentionIsTheAverageWaitForACpuPerTurnOnOne() {
        long[] c = {1_000, 1};
        CpuContention cc = scripted(c);
        long t = 1_000_000_000L;
        assertThat(cc.contended(t)).isFalse();
        c[0] += 100 * (CpuContention.CONTENDED_WAIT_NANOS / 2);
        c[1] += 100;
        assertThat(cc.contended(t + CpuContention.INTERVAL_NANOS)).as("short waits").isFalse();
        c[0] += 10 * 2 * CpuContention.CONTENDED_WAIT_NANOS;
        c[1] += 10;
        assertThat(cc.contended(t + CpuContention.INTERVAL_NANOS + 1)).as("read at most once an interval").isFalse();
        assertThat(cc.contended(t + 2 * CpuContention.INTERVAL_NANOS)).isTrue();
        assertThat(cc.contended(t + 3 * CpuContention.INTERVAL_NANOS)).as("no turn since: as it was").isTrue();
        c[1] += 5;
        assertThat(cc.contended(t + 4 * CpuContention.INTERVAL_NANOS)).as("five turns without waiting").isFalse();
    }

    @Test
    void aThreadThatNeverWaitsSkipsTheSpinWhileTheHostIsUnderPressure() {
        long[] stalledMicros = {0};
        CpuPressure host = new CpuPressure(() -> stalledMicros[0], () -> now);
        CpuContention cc = new CpuContention(into -> {
            into[0] = 0;
            into[1] = 1;
            return true;
        }, host);
        ScriptedWaiter w = new ScriptedWaiter();
        IdleWait idle = new IdleWait(1_000, w, cc, clock);
        idle.idle(0);
        assertThat(w.calls).as("spinning").isZero();
        // other tasks waited for a CPU during half of the next interval
        now += CpuPressure.INTERVAL_NANOS;
        stalledMicros[0] += CpuPressure.INTERVAL_NANOS / 1_000 / 2;
        idle.idle(1);
        idle.idle(0);
        assertThat(w.calls).as("blocked without spinning").isEqualTo(1);
        // an interval without stalls: the spin is back
        now += CpuPressure.INTERVAL_NANOS;
        idle.idle(1);
        idle.idle(0);
        assertThat(w.calls).as("spinning again").isEqualTo(1);
    }

    @Test
    void theHostsPressureIsAskedAtMostOnceAnInterval() {
        long[] reads = {0};
        long[] hostClock = {0};
        // a host clock that moves a whole interval per look: every question reaches the file
        CpuPressure host = new CpuPressure(() -> {
            reads[0]++;
            return 0;
        }, () -> hostClock[0] += CpuPressure.INTERVAL_NANOS);
        CpuContention cc = new CpuContention(into -> {
            into[0] = 0;
            into[1] = 1;
            return true;
        }, host);
        long t = 1_000_000_000L;
        for (int i = 0; i < 100; i++) {
            cc.contended(t + i);
        }
        assertThat(reads[0]).as("one look for a hundred waits within an interval").isEqualTo(1);
        cc.contended(t + CpuContention.INTERVAL_NANOS);
        assertThat(reads[0]).isEqualTo(2);
    }

    @Test
    void withoutTheKernelsCountNothingCountsAsContended() {
        CpuContention cc = new CpuContention(into -> false, NO_PRESSURE);
        assertThat(cc.contended(1)).isFalse();
        assertThat(cc.contended(1 + 10 * CpuContention.INTERVAL_NANOS)).isFalse();
    }

    @Test
    void theKernelsCountOfThisThreadIsReadWhereLinuxKeepsIt() {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/thread-self/schedstat")),
                "no per-thread schedstat here");
        long[] first = new long[2];
        long[] second = new long[2];
        assertThat(CpuContention.readSchedstat(first)).isTrue();
        assertThat(CpuContention.readSchedstat(second)).isTrue();
        assertThat(first[0]).isNotNegative();
        assertThat(first[1]).isPositive();
        assertThat(second[0]).isGreaterThanOrEqualTo(first[0]);
        assertThat(second[1]).isGreaterThanOrEqualTo(first[1]);
    }
}
