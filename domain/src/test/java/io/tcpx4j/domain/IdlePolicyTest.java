package io.tcpx4j.domain;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The progress thread under each {@link IdlePolicy}: transfers complete with every policy, a quiet
 * engine blocks instead of cycling, and anything that arrives wakes it.
 */
class IdlePolicyTest {

    private static final int SIZE = 1 << 20;

    @ParameterizedTest
    @EnumSource(IdlePolicy.class)
    void transfersCompleteAndNotifyUnderEveryPolicy(IdlePolicy policy) throws Exception {
        try (StartedPair t = new StartedPair(policy, true, SIZE)) {
            Random random = new Random(policy.ordinal());
            for (int round = 0; round < 3; round++) {
                byte[] data = t.fill(random.nextInt());
                Transfer x = t.write(("round-" + round).getBytes());
                assertThat(x.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
                assertThat(t.received()).isEqualTo(data);
                assertThat(awaitNotification(t.b)).extracting(n -> new String(n.message()))
                        .isEqualTo("round-" + round);
            }
        }
    }

    @Test
    void aQuietEngineBlocksInsteadOfCyclingAndWakesForWork() throws Exception {
        try (StartedPair t = new StartedPair(IdlePolicy.ADAPTIVE, true, SIZE)) {
            assertThat(t.write(null).await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
            Thread.sleep(200);
            long before = t.b.stats().dutyCycles();
            Thread.sleep(1000);
            long cycles = t.b.stats().dutyCycles() - before;
            // blocking waits end for timers at most every 100 ms; a polling agent runs thousands of cycles a second
            assertThat(cycles).as("duty cycles of a quiet engine in one second").isLessThan(100);

            // a notification (a control frame) must still reach the blocked target promptly enough to be seen
            t.a.session("beta").notify("ping".getBytes());
            assertThat(awaitNotification(t.b)).extracting(n -> new String(n.message())).isEqualTo("ping");
        }
    }

    @Test
    void aBusySpinningEngineNeverBlocks() throws Exception {
        try (StartedPair t = new StartedPair(IdlePolicy.BUSY_SPIN, true, SIZE)) {
            assertThat(t.write(null).await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
            long before = t.b.stats().dutyCycles();
            Thread.sleep(500);
            assertThat(t.b.stats().dutyCycles() - before).as("duty cycles in 500 ms").isGreaterThan(1000);
        }
    }

    @Test
    void commandsFromManyThreadsAllReachABlockedAgent() throws Exception {
        try (StartedPair t = new StartedPair(IdlePolicy.ADAPTIVE, true, SIZE)) {
            assertThat(t.write(null).await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
            int threads = 4;
            int each = 50;
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> senders = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int id = i;
                Thread s = new Thread(() -> {
                    try {
                        go.await();
                        for (int k = 0; k < each; k++) {
                            t.a.session("beta").notify((id + ":" + k).getBytes());
                            if (k % 10 == 0) {
                                Thread.sleep(1);
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                s.start();
                senders.add(s);
            }
            go.countDown();
            for (Thread s : senders) {
                s.join();
            }
            AtomicInteger got = new AtomicInteger();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (got.get() < threads * each && System.nanoTime() < deadline) {
                got.addAndGet(t.b.drainNotifications().size());
                Thread.sleep(1);
            }
            assertThat(got.get()).isEqualTo(threads * each);
        }
    }

    private static Notification awaitNotification(Engine e) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            List<Notification> n = e.drainNotifications();
            if (!n.isEmpty()) {
                return n.get(0);
            }
            Thread.sleep(1);
        }
        throw new AssertionError("no notification within 20 s");
    }
}
