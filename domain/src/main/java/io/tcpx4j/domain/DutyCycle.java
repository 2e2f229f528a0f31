package io.tcpx4j.domain;

import io.tcpx4j.domain.port.out.CallerLease;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who runs an engine's duty cycle, one at a time: the agent thread (this is its {@link AgentRunner.Agent})
 * or an application thread lending itself through {@link #progress()}. Owns the guard that keeps duty
 * cycles from overlapping, the caller lease that keeps the agent thread off the cycle while a caller
 * polls, and the shutdown fence after which no cycle runs. What a cycle does is the {@link Owner}'s.
 *
 * <p>Thread-safe: {@link #doWork()}, {@link #progress()} and {@link #quiet()} from any thread (a call
 * that finds the guard held returns at once); {@link #shutDown()} once, by whoever shuts the engine down.
 */
final class DutyCycle implements AgentRunner.Agent {

    /** The engine behind the cycle. */
    interface Owner {
        /** One duty cycle; called with the guard held. Returns the work done (0: nothing happened). */
        int cycle();

        /** Whether no command is queued and no connection needs polling; called with the guard held. */
        boolean idle();

        /** One turn of the transport's own I/O on the calling thread; returns the work done. */
        int drive();

        /**
         * Whether a turn of the transport's own I/O is due: the transport has I/O to drive
         * ({@code NetTransport.drivable()}) and holds requests of this engine. Called before a cycle.
         */
        boolean driveDue();

        /** A duty cycle threw: fail what is in flight. */
        void failed(Throwable e);

        /** The agent thread stopped: shut the engine down on it. */
        void stopped();
    }

    /** Most duty cycles one {@link #progress()} call runs, so a polling caller gets its thread back. */
    private static final int MAX_INLINE_CYCLES = 16;
    /** How often callers drive the transport while it holds no request of this engine (see callerDrive). */
    static final long IDLE_DRIVE_NANOS = 100_000;

    private final Owner owner;
    private final Readiness readiness;
    private final long maxBlockMillis;
    /** Held by whoever runs a duty cycle: the agent thread or a caller of progress(). */
    private final AtomicBoolean cycling = new AtomicBoolean();
    private volatile boolean shutDown;
    /**
     * Held by callers of {@link #progress()}, while inside (one call may write megabytes to the sockets)
     * and for {@link CallerLease#NANOS} after: meanwhile the agent thread stays off the duty cycle. A host
     * that polls calls again well within it, and an agent thread that took the guard and then lost its
     * CPU to the host's poller would stall the poller for a scheduler tick (milliseconds). Shared by the
     * engine's agents: a call runs each agent's cycles in turn, and keeps every agent thread off meanwhile.
     */
    private final CallerLease lease;
    /** When a caller last drove the transport while it held no request; racy among callers by design. */
    private volatile long lastIdleDrive = System.nanoTime() - 2 * IDLE_DRIVE_NANOS;

    DutyCycle(Owner owner, Readiness readiness, long maxBlockMillis, CallerLease lease) {
        this.owner = owner;
        this.readiness = readiness;
        this.maxBlockMillis = maxBlockMillis;
        this.lease = lease;
    }

    /**
     * Runs one duty cycle unless another thread runs one right now or the engine is shut down. While
     * requests are out on the transport, a turn of the transport's own I/O first ({@link Owner#drive()}):
     * where the transport lets its callers drive it (the loopback transport on small hosts) the agent
     * thread moves the sockets of its chunks itself, and no chunk waits for a switch to an I/O thread.
     */
    @Override
    public int doWork() {
        return owner.driveDue() ? owner.drive() + cycle() : cycle();
    }

    private int cycle() {
        if (shutDown || !cycling.compareAndSet(false, true)) {
            return 0;
        }
        try {
            return owner.cycle();
        } finally {
            cycling.set(false);
        }
    }

    /** The caller-driven duty cycles of {@code Engine.progress()}, which documents them. */
    int progress() {
        lease.enter();
        try {
            return cycles();
        } finally {
            lease.exit();
        }
    }

    /**
     * A caller's turn of the transport's I/O: in every cycle while requests are out; otherwise at most
     * once per {@link #IDLE_DRIVE_NANOS}, which keeps the transport's own threads parked (their lease is
     * 1 ms) and moves its set-up work (data channels connecting), while a poller waiting for a control
     * frame (an inline transfer's answer) pays no socket poll of the data channels per call.
     */
    private int callerDrive() {
        if (owner.driveDue()) {
            return owner.drive();
        }
        long now = System.nanoTime();
        if (now - lastIdleDrive < IDLE_DRIVE_NANOS) {
            return 0;
        }
        lastIdleDrive = now;
        return owner.drive();
    }

    private int cycles() {
        int total = 0;
        for (int i = 0; i < MAX_INLINE_CYCLES; i++) {
            int work;
            try {
                // the transport's own I/O too (the loopback transport's sockets), on this thread; first,
                // so that the transport knows a caller drives it before this cycle posts anything
                work = callerDrive() + cycle();
            } catch (RuntimeException | Error e) {
                owner.failed(e);
                return total + 1;
            }
            if (work == 0) {
                break;
            }
            total += work;
        }
        if (quiet()) {
            return total;
        }
        if (total == 0) {
            // nothing to do here until bytes arrive, or another thread (a staging copy, a peer on the same
            // cores, the transport's own threads when the calls stop) moves them: a host poller calling
            // in a tight loop would hold the core they need
            Thread.yield();
        } else {
            // what this call started needs polling that only the agent thread does when nobody calls:
            // do not let it stay blocked. A quiet engine is moved on only by events that wake it anyway
            // (a frame, a connection, a command, a transport completion), and an extra wake-up costs
            // a thread switch per call on a host whose cores the caller's poller already holds.
            readiness.wake();
        }
        return total;
    }

    /**
     * Reads connection state, which belongs to whoever runs the duty cycle: under the same guard, and
     * "not quiet" while a caller of {@link #progress()} holds it.
     */
    @Override
    public boolean quiet() {
        if (!cycling.compareAndSet(false, true)) {
            return false;
        }
        try {
            return owner.idle();
        } finally {
            cycling.set(false);
        }
    }

    @Override
    public long callerLeaseNanos() {
        return lease.leftNanos(System.nanoTime());
    }

    @Override
    public long maxBlockMillis() {
        return maxBlockMillis;
    }

    @Override
    public void failed(Throwable e) {
        owner.failed(e);
    }

    @Override
    public void stopped() {
        owner.stopped();
    }

    /** Waits for a duty cycle in progress to finish; no cycle starts after this returns. */
    void shutDown() {
        while (!cycling.compareAndSet(false, true)) {
            Thread.onSpinWait(); // a caller's duty cycle is finishing
        }
        shutDown = true;
        cycling.set(false);
    }
}
