package io.tcpx4j.domain;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link AgentRunner}: how wakes reach the agent thread while a caller holds the lease and after. */
class AgentRunnerTest {

    private static final String NAME = "agent-runner-test";

    /** An agent whose lease the test sets; counts the runner's looks at the lease and its duty cycles. */
    private static final class LeasedAgent implements AgentRunner.Agent {
        volatile long leaseNanos;
        final AtomicInteger leaseChecksByRunner = new AtomicInteger();
        final AtomicInteger cycles = new AtomicInteger();

        @Override
        public int doWork() {
            cycles.incrementAndGet();
            return 0;
        }

        @Override
        public boolean quiet() {
            return true;
        }

        @Override
        public long maxBlockMillis() {
            return 10_000;
        }

        @Override
        public long callerLeaseNanos() {
            if (Thread.currentThread().getName().equals(NAME)) {
                leaseChecksByRunner.incrementAndGet();
            }
            return leaseNanos;
        }

        @Override
        public void failed(Throwable e) {
            throw new AssertionError(e);
        }

        @Override
        public void stopped() {
            // nothing to release
        }
    }

    @Test
    void wakesLeaveALeaseParkAloneAndReachTheAgentOnceTheLeaseIsOver() throws Exception {
        LeasedAgent agent = new LeasedAgent();
        agent.leaseNanos = TimeUnit.SECONDS.toNanos(60);
        try (Readiness readiness = new Readiness()) {
            AgentRunner r = new AgentRunner(NAME, agent, IdlePolicy.ADAPTIVE, readiness);
            r.start();
            awaitAtLeast(agent.leaseChecksByRunner, 1);
            Thread.sleep(50);
            int before = agent.leaseChecksByRunner.get();

            for (int i = 0; i < 1000; i++) {
                r.wake();
            }
            Thread.sleep(100);
            // an unparked runner would have looked at the lease again (and parked again)
            assertThat(agent.leaseChecksByRunner.get()).isEqualTo(before);
            assertThat(agent.cycles.get()).isZero();

            agent.leaseNanos = 0;
            r.wake();
            awaitAtLeast(agent.cycles, 1);
            r.requestStop();
            assertThat(r.awaitStopped(5_000)).isTrue();
        }
    }

    @Test
    void aRunnerWhoseCallerRenewsTheLeaseWithoutPauseLooksAtItLessOftenAndServesOnceItEnds() throws Exception {
        LeasedAgent agent = new LeasedAgent();
        agent.leaseNanos = TimeUnit.MILLISECONDS.toNanos(1); // a fresh call before every look
        try (Readiness readiness = new Readiness()) {
            AgentRunner r = new AgentRunner(NAME, agent, IdlePolicy.ADAPTIVE, readiness);
            r.start();
            awaitAtLeast(agent.leaseChecksByRunner, 1);
            Thread.sleep(400);
            // parks of 1, 2, 4, then 8 ms: about 50 looks in 400 ms; one per lease would be about 400
            assertThat(agent.leaseChecksByRunner.get()).isBetween(2, 120);
            assertThat(agent.cycles.get()).isZero();

            agent.leaseNanos = 0; // the caller stopped, and nothing wakes the runner: its next look serves
            awaitAtLeast(agent.cycles, 1);
            r.requestStop();
            assertThat(r.awaitStopped(5_000)).isTrue();
        }
    }

    private static void awaitAtLeast(AtomicInteger n, int at) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (n.get() < at && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(n.get()).isGreaterThanOrEqualTo(at);
    }
}
