package io.tcpx4j.domain;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link IdleWait}: spin, then block where only events matter, else parks that double up to a cap. */
class IdleWaitTest {

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
        IdleWait idle = new IdleWait(0, w);
        for (int i = 0; i < 5; i++) {
            idle.idle(0);
        }
        assertThat(w.calls).isEqualTo(5);
        assertThat(idle.lastParkNanos()).isZero();
    }

    @Test
    void whileSpinningItNeverBlocksAndWorkStartsTheSpinAgain() {
        ScriptedWaiter w = new ScriptedWaiter();
        IdleWait idle = new IdleWait(Long.MAX_VALUE / 2, w);
        for (int i = 0; i < 1000; i++) {
            idle.idle(i % 7 == 0 ? 1 : 0);
        }
        assertThat(w.calls).isZero();
    }

    @Test
    void somethingToPollParksDoublingUpToTheCapAndAnEventResetsIt() {
        ScriptedWaiter w = new ScriptedWaiter();
        for (int i = 0; i < 8; i++) {
            w.answers.add(false);
        }
        w.answers.add(true);
        w.answers.add(false);
        IdleWait idle = new IdleWait(0, w);
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
        IdleWait idle = new IdleWait(0, w);
        idle.idle(0);
        idle.idle(0);
        idle.idle(3);
        assertThat(idle.lastParkNanos()).isZero();
        idle.idle(0);
        assertThat(idle.lastParkNanos()).isEqualTo(1_000);
    }
}
