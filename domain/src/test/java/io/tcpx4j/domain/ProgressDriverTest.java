package io.tcpx4j.domain;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Progress;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who drives an engine ({@link Progress}): its own thread, or the application's threads, one at a time,
 * never both; and an idle driver blocks until an event instead of cycling.
 */
class ProgressDriverTest {

    private static final int SIZE = 1 << 20;
    private static final Progress THREAD = Progress.defaults();
    private static final Progress THREAD_NO_SPIN = THREAD.withSpin(Duration.ZERO);
    private static final Progress CALLER = THREAD.withDriver(Progress.Driver.CALLER);
    private static final Progress CALLER_NO_SPIN = CALLER.withSpin(Duration.ZERO);

    @Test
    void transfersCompleteAndNotifyWithTheEnginesThreads() throws Exception {
        for (Progress p : List.of(THREAD, THREAD_NO_SPIN)) {
            try (StartedPair t = new StartedPair(p, true, SIZE)) {
                writeRounds(t, 3, p.spin().toNanos());
            }
        }
    }

    @Test
    void awaitDrivesACallerDrivenEngineOnTheWaitingThread() throws Exception {
        for (Progress p : List.of(CALLER, CALLER_NO_SPIN)) {
            // alpha has no thread of its own: only await moves its transfers
            try (StartedPair t = new StartedPair(p, THREAD, true, SIZE)) {
                writeRounds(t, 3, 7);
                assertThat(t.a.stats().dutyCycles()).isPositive();
            }
        }
    }

    @Test
    void progressDoesNothingWhereTheEnginesThreadDrives() throws Exception {
        try (StartedPair t = new StartedPair(THREAD, true, SIZE)) {
            Transfer x = t.write(null);
            int work = 0;
            while (x.status() == TransferStatus.IN_PROGRESS) {
                work += t.a.progress() + t.b.progress();
            }
            assertThat(x.status()).isEqualTo(TransferStatus.DONE);
            assertThat(work).isZero();
        }
    }

    @Test
    void callersAloneMoveEveryByte() {
        try (StartedPair t = new StartedPair(CALLER, true, 4 << 20)) {
            for (int round = 0; round < 3; round++) {
                byte[] data = t.fill(round);
                Transfer x = t.write(("n" + round).getBytes());
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (x.status() == TransferStatus.IN_PROGRESS && System.nanoTime() < deadline) {
                    t.a.progress();
                    t.b.progress();
                }
                assertThat(x.status()).isEqualTo(TransferStatus.DONE);
                assertThat(t.received()).isEqualTo(data);
                assertThat(t.b.drainNotifications()).extracting(n -> new String(n.message()))
                        .containsExactly("n" + round);
            }
        }
    }

    @Test
    void severalCallerThreadsDriveOneAtATimeWithoutLosingAByte() throws Exception {
        try (StartedPair t = new StartedPair(CALLER_NO_SPIN, true, 4 << 20)) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> pollers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Thread p = new Thread(() -> {
                    while (!stop.get()) {
                        t.a.progress();
                        t.b.progress();
                    }
                });
                p.start();
                pollers.add(p);
            }
            try {
                for (int round = 0; round < 10; round++) {
                    byte[] data = t.fill(round);
                    Transfer x = t.write(null);
                    // the waiting thread drives alpha too, taking turns with the pollers
                    assertThat(x.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
                    assertThat(t.received()).isEqualTo(data);
                }
            } finally {
                stop.set(true);
                for (Thread p : pollers) {
                    p.join();
                }
            }
            assertThat(t.a.stats().outstandingRequests()).isZero();
        }
    }

    @Test
    void aQuietEngineBlocksInsteadOfCyclingAndWakesForWork() throws Exception {
        try (StartedPair t = new StartedPair(THREAD_NO_SPIN, true, SIZE)) {
            BlockingQueue<Notification> notes = listen(t.b);
            assertThat(t.write(null).await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
            awaitBlocks(t.b, t.b.driverBlocks() + 2); // past the transfer's last frames
            long cycles = t.b.stats().dutyCycles();
            long blocks = t.b.driverBlocks();
            awaitBlocks(t.b, blocks + 10);
            long blocked = t.b.driverBlocks() - blocks;
            // a quiet driver wakes from each block for its timers, finds nothing (or a heartbeat to send or
            // read, then nothing) and blocks again; one that spun, yielded or parked would run cycles without
            // blocking, and never block at all if it only parked
            assertThat(t.b.stats().dutyCycles() - cycles).as("duty cycles of a quiet engine over %d blocks", blocked)
                    .isLessThanOrEqualTo(2 * blocked + 2);

            t.a.session("beta").notify("ping".getBytes());
            assertThat(notes.poll(20, TimeUnit.SECONDS)).extracting(n -> new String(n.message())).isEqualTo("ping");
        }
    }

    @Test
    void commandsFromManyThreadsAllReachABlockedAgent() throws Exception {
        try (StartedPair t = new StartedPair(THREAD_NO_SPIN, true, SIZE)) {
            assertThat(t.write(null).await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
            int threads = 4;
            int each = 50;
            AtomicInteger got = new AtomicInteger();
            CountDownLatch delivered = new CountDownLatch(threads * each);
            t.b.onNotification(n -> {
                got.incrementAndGet();
                delivered.countDown();
            });
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> senders = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int id = i;
                Thread s = new Thread(() -> {
                    try {
                        go.await();
                        for (int k = 0; k < each; k++) {
                            t.a.session("beta").notify((id + ":" + k).getBytes());
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
            assertThat(delivered.await(20, TimeUnit.SECONDS)).as("every notification delivered").isTrue();
            assertThat(got.get()).isEqualTo(threads * each);
        }
    }

    @Test
    void progressAfterCloseDoesNothing() {
        StartedPair t = new StartedPair(CALLER, true, SIZE);
        t.close();
        assertThat(t.a.progress()).isZero();
    }

    @Test
    void closeEndsACallerBlockedInAwait() throws Exception {
        StartedPair t = new StartedPair(CALLER_NO_SPIN, THREAD, true, SIZE);
        try {
            assertThat(t.write(null).await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
            t.b.close(); // the target goes away: alpha's next transfer waits for a peer that never answers
            Transfer x = t.write(null);
            Thread closer = new Thread(() -> t.a.close());
            closer.start();
            assertThat(x.await(Duration.ofSeconds(20))).isNotEqualTo(TransferStatus.IN_PROGRESS);
            closer.join(TimeUnit.SECONDS.toMillis(20));
            assertThat(closer.isAlive()).isFalse();
        } finally {
            t.close();
        }
    }

    private static void writeRounds(StartedPair t, int rounds, long seed) throws Exception {
        BlockingQueue<Notification> notes = listen(t.b);
        Random random = new Random(seed);
        for (int round = 0; round < rounds; round++) {
            byte[] data = t.fill(random.nextInt());
            Transfer x = t.write(("round-" + round).getBytes());
            assertThat(x.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
            assertThat(t.received()).isEqualTo(data);
            assertThat(notes.poll(20, TimeUnit.SECONDS)).extracting(n -> new String(n.message()))
                    .isEqualTo("round-" + round);
        }
    }

    /** The notifications {@code e} receives from now on, handed over by its listener. */
    private static BlockingQueue<Notification> listen(Engine e) {
        BlockingQueue<Notification> notes = new LinkedBlockingQueue<>();
        e.onNotification(notes::add);
        return notes;
    }

    /**
     * Waits until {@code e}'s drivers have blocked {@code blocks} times in all; the count decides, the
     * millisecond between looks only paces the test's thread, and 30 s turn a driver that never blocks into
     * a failure.
     */
    private static void awaitBlocks(Engine e, long blocks) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (e.driverBlocks() < blocks) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("the driver blocked " + e.driverBlocks() + " times, not " + blocks
                        + ", within 30 s (" + e.stats().dutyCycles() + " duty cycles)");
            }
            Thread.sleep(1);
        }
    }
}
