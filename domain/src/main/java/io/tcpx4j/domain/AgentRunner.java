package io.tcpx4j.domain;

import io.tcpx4j.domain.port.out.StandAside;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs an engine's duty cycle on a thread of its own and waits between cycles as the
 * {@link IdlePolicy} says: after work it spins and yields (the next event is usually a round trip
 * away), then parks briefly while requests are in flight, or blocks on {@link Readiness} while the
 * engine is quiet.
 *
 * <p>Thread-safe: {@link #wake()} from any thread; the rest is called by the engine.
 */
final class AgentRunner {

    private static final System.Logger LOG = System.getLogger(AgentRunner.class.getName());

    /** The work the runner drives. */
    interface Agent {
        /** One duty cycle; returns the work done (0: nothing happened). */
        int doWork();

        /** Whether nothing is in flight that needs polling: only a command, a socket or a wake can matter. */
        boolean quiet();

        /** Longest a quiet agent may block before its timers (heartbeats, timeouts) need a cycle. */
        long maxBlockMillis();

        /**
         * How much longer a caller that lends its thread ({@code progress()}) is presumed to go on doing
         * the work (the whole lease while a caller is inside a call, however long the call runs);
         * while positive the runner stays off the duty cycle, so that it never holds it while
         * the caller's poller has the CPU (and, for a caller that renews it without pause, up to
         * {@link StandAside#MAX_PARK_NANOS} after it ends). 0 or less: nobody is calling.
         */
        long callerLeaseNanos();

        /** The duty cycle threw: fail what is in flight; the runner goes on. */
        void failed(Throwable e);

        /** Last call on the thread, after the runner stopped. */
        void stopped();
    }

    private final Agent agent;
    private final IdlePolicy policy;
    private final Readiness readiness;
    private final Thread thread;
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile boolean running = true;

    AgentRunner(String name, Agent agent, IdlePolicy policy, Readiness readiness) {
        this.agent = agent;
        this.policy = policy;
        this.readiness = readiness;
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /**
     * Ends a park or a block at once (a command, a transport event); cheap when the agent runs. While a
     * caller holds the lease the agent's park is left alone: it would only park again, and the caller's
     * next {@code progress()} does the work (the unpark is a system call and a thread switch onto the
     * cores the caller's poller holds).
     */
    void wake() {
        readiness.wake();
        if (agent.callerLeaseNanos() <= 0) {
            LockSupport.unpark(thread);
        }
    }

    /** Asks the thread to stop; it shuts the agent down ({@link Agent#stopped()}) and ends. */
    void requestStop() {
        running = false;
        readiness.wake();
        LockSupport.unpark(thread);
    }

    /** Waits up to {@code timeoutMillis} for the thread to end; false if it did not end in time. */
    boolean awaitStopped(long timeoutMillis) throws InterruptedException {
        return done.await(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    private void run() {
        int idle = 0;
        StandAside standAside = new StandAside(StandAside.MAX_PARK_NANOS);
        try {
            while (running) {
                long park = standAside.parkNanos(agent.callerLeaseNanos());
                if (park > 0) {
                    LockSupport.parkNanos(park);
                    idle = 0;
                    continue;
                }
                int work;
                try {
                    work = agent.doWork();
                } catch (RuntimeException | Error e) {
                    agent.failed(e);
                    work = 1;
                }
                try {
                    if (work > 0) {
                        idle = 0;
                    } else if (policy.blocksWhenIdle && idle >= policy.spins + policy.yields && agent.quiet()) {
                        // a reply usually comes within a round trip, which the spins and yields cover;
                        // after that a quiet engine blocks, and stays in that mode until work turns up
                        readiness.await(agent.maxBlockMillis(), () -> running && agent.quiet());
                    } else {
                        idle = pause(idle);
                    }
                } catch (RuntimeException e) {
                    agent.failed(e);
                    idle = pause(idle);
                }
            }
            agent.stopped();
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, "progress agent stopped by an error", e);
            throw e;
        } finally {
            done.countDown();
        }
    }

    /** Spin, then yield, then park with a growing, capped sleep; returns the next idle count. */
    private int pause(int idle) {
        if (idle < policy.spins) {
            Thread.onSpinWait();
        } else if (idle - policy.spins < policy.yields) {
            Thread.yield();
        } else {
            int doublings = Math.min(idle - policy.spins - policy.yields, 30);
            LockSupport.parkNanos(Math.min(policy.minParkNanos << doublings, policy.maxParkNanos));
        }
        return idle == Integer.MAX_VALUE ? idle : idle + 1;
    }
}
