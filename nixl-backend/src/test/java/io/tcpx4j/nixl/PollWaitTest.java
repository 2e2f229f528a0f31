package io.tcpx4j.nixl;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a poll waits: only in a loop (the item polled again within the window, nothing new), only on
 * contended CPUs, and only until the next event. A hand clock tells loops; contention is scripted. A wait
 * that should end at an event has an hour's window, so that missing the event fails by the timeout.
 */
@Timeout(60)
class PollWaitTest {

    private static final Duration HOUR = Duration.ofHours(1);

    private long now = 1_000_000_000L;
    private boolean contended = true;

    private PollWait pollWait(Duration window) {
        return new PollWait(window, t -> contended, () -> now);
    }

    @Test
    void theFirstEmptyPollOfAnItemNeverWaits() {
        PollWait w = pollWait(HOUR);

        assertThat(w.afterEmpty(new PollWait.Loop(), w.events())).isFalse();
    }

    @Test
    void anEventSinceThePollLookedEndsTheWaitAtOnce() {
        PollWait w = pollWait(HOUR);
        PollWait.Loop loop = new PollWait.Loop();
        w.afterEmpty(loop, w.events());
        long seen = w.events();
        w.signal();

        assertThat(w.afterEmpty(loop, seen)).as("waited, and the event it missed ended the wait").isTrue();
    }

    @Test
    void aPollInALoopOnContendedCpusWaitsUntilTheNextEvent() throws Exception {
        PollWait w = pollWait(HOUR);
        PollWait.Loop loop = new PollWait.Loop();
        w.afterEmpty(loop, w.events());
        AtomicBoolean waited = new AtomicBoolean();
        long seen = w.events();
        Thread poller = new Thread(() -> waited.set(w.afterEmpty(loop, seen)));
        poller.start();
        while (poller.getState() != Thread.State.TIMED_WAITING && poller.isAlive()) {
            Thread.onSpinWait();
        }
        assertThat(poller.isAlive()).as("the poll waits").isTrue();

        w.signal();
        poller.join();

        assertThat(waited).isTrue();
    }

    @Test
    void withoutContentionAPollInALoopReturnsAtOnce() {
        PollWait w = pollWait(HOUR);
        PollWait.Loop loop = new PollWait.Loop();
        contended = false;

        for (int i = 0; i < 3; i++) {
            now += 1_000;
            assertThat(w.afterEmpty(loop, w.events())).isFalse();
        }
    }

    @Test
    void aPollLaterThanTheWindowAfterTheLastStartsANewLoop() {
        PollWait w = pollWait(Duration.ofNanos(100_000));
        PollWait.Loop loop = new PollWait.Loop();
        w.afterEmpty(loop, w.events());
        now += 100_001;

        assertThat(w.afterEmpty(loop, w.events())).isFalse();
    }

    @Test
    void newsOnTheItemEndsItsLoop() {
        PollWait w = pollWait(HOUR);
        PollWait.Loop loop = new PollWait.Loop();
        w.afterEmpty(loop, w.events());
        loop.reset();

        assertThat(w.afterEmpty(loop, w.events())).isFalse();
    }

    @Test
    void withoutAnEventTheWaitEndsAfterTheWindow() {
        PollWait w = pollWait(Duration.ofMillis(1));
        PollWait.Loop loop = new PollWait.Loop();
        w.afterEmpty(loop, w.events());

        assertThat(w.afterEmpty(loop, w.events())).isTrue();
    }

    @Test
    void aZeroWindowNeverWaits() {
        PollWait w = pollWait(Duration.ZERO);
        PollWait.Loop loop = new PollWait.Loop();

        assertThat(w.waits()).isFalse();
        assertThat(pollWait(HOUR).waits()).isTrue();
        assertThat(w.afterEmpty(loop, w.events())).isFalse();
        assertThat(w.afterEmpty(loop, w.events())).isFalse();
    }
}
