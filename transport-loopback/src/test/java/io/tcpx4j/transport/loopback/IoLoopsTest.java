package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.port.out.CallerLease;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link IoLoops#drive()}: callers that drive the loops keep every loop's thread off them. */
class IoLoopsTest {

    /** Work found on each pass; {@code spinNanos} of it per pass (a turn that writes megabytes). */
    private static IoLoop.Pumpable pumpable(long spinNanos, Set<Thread> pumpers) {
        return new IoLoop.Pumpable() {
            @Override
            public void pump() {
                pumpers.add(Thread.currentThread());
                long until = System.nanoTime() + spinNanos;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
            }

            @Override
            public void crashed(RuntimeException e) {
                throw new AssertionError(e);
            }
        };
    }

    private static void addOnLoop(IoLoop loop, IoLoop.Pumpable p) throws InterruptedException {
        CountDownLatch added = new CountDownLatch(1);
        loop.execute(() -> {
            loop.add(p);
            added.countDown();
        });
        assertThat(added.await(5, TimeUnit.SECONDS)).as("the loop ran the task").isTrue();
    }

    @Test
    void aCallersTurnOnOneLoopThatOutlastsTheLeaseKeepsTheOtherLoopsThreadOff() throws InterruptedException {
        IoLoops loops = new IoLoops(2);
        try {
            IoLoop slow = loops.next();
            IoLoop other = loops.next();
            Set<Thread> slowPumpers = ConcurrentHashMap.newKeySet();
            Set<Thread> otherPumpers = ConcurrentHashMap.newKeySet();
            addOnLoop(slow, pumpable(3 * CallerLease.NANOS, slowPumpers));
            addOnLoop(other, pumpable(0, otherPumpers));

            // a polling host: each call drives both loops, and requests posted between calls wake the
            // other loop (as the transport's isend does); its pass is the caller's next drive() unless the
            // loop's own thread takes it, which it may only once the callers' lease is over
            long warmUp = System.nanoTime() + 20_000_000L;
            while (System.nanoTime() < warmUp) {
                other.wake();
                loops.drive();
            }
            otherPumpers.clear();
            long until = System.nanoTime() + 300_000_000L;
            while (System.nanoTime() < until) {
                other.wake();
                loops.drive();
            }
            assertThat(otherPumpers).as("threads that pumped the other loop while the caller drove")
                    .containsOnly(Thread.currentThread());
            assertThat(slowPumpers).contains(Thread.currentThread());
        } finally {
            loops.close();
            loops.shutdown();
        }
    }
}
