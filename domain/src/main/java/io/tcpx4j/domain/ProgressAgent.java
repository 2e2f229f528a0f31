package io.tcpx4j.domain;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.CallerLease;

import java.util.Queue;

/**
 * One progress agent of an engine: the peers it serves ({@link EngineContext#serves}) with their
 * connections, transfers and notifications, its control listener, its command queue, and who runs its
 * duty cycle (its thread, or callers of {@code progress()}). The agents of one engine share its
 * registered memory and notification queue and nothing else, so they run side by side without locks
 * on the data path; a peer dials the agent that serves it through the port conn-info lists for it.
 *
 * <p>Thread-safe as {@link Engine} uses it: {@link #commands} and the racy counters from any thread,
 * the rest under the engine's lifecycle lock or on the agent.
 */
final class ProgressAgent {

    private static final System.Logger LOG = System.getLogger(ProgressAgent.class.getName());
    /**
     * New control connections are rare, and a handshake takes several round trips: a cycle polls the
     * listener at most once a millisecond (a quiet agent blocks on the listener's readiness instead).
     */
    private static final long ACCEPT_POLL_NANOS = 1_000_000;
    private static final long HOUSEKEEPING_NANOS = 1_000_000;
    /** Longest a quiet agent blocks: bounds how late housekeeping (deregistration, redials) runs. */
    private static final long MAX_BLOCK_MILLIS = 100;

    final CommandQueue commands;
    final PeerDirectory directory;
    private final EngineContext ctx;
    private final String threadName;
    /** Whether the transport has I/O of its own that the thread running a cycle may drive. */
    private final boolean drivable;
    private final Readiness readiness = new Readiness();
    private final DutyCycle duty;
    /** What the engine does once this agent has shut down (the last one frees what they share). */
    private final Runnable onShutdown;

    // agent only (dutyCycles is read racily by stats())
    private long dutyCycles;
    private long lastHousekeeping;
    private long lastAccept;

    /**
     * Whether this agent had anything the transport's progress can move (requests out, channels being
     * set up) at the end of its last cycle. The transport wakes every listener of an engine at each of
     * its completions; with several agents, one that has nothing out lets the wake pass, so that a busy
     * agent's completions do not wake the idle ones (each such wake costs the transport's I/O thread a
     * selector wake-up and the idle agent an empty cycle). A completion racing with the update finds the
     * agent that posted it still spinning after that cycle's work.
     */
    private volatile boolean awaitsTransport = true;

    private ControlListener listener;
    private volatile AgentRunner runner;
    private Runnable stopWakes = () -> { };

    ProgressAgent(EngineContext ctx, CommandQueue commands, Queue<Notification> notifications, CallerLease lease,
                  Runnable onShutdown) {
        this.ctx = ctx;
        this.commands = commands;
        this.onShutdown = onShutdown;
        this.drivable = ctx.transport().drivable();
        this.threadName = "tcpx4j-agent-" + ctx.name() + (ctx.config().agents() > 1 ? "-" + ctx.agent() : "");
        this.directory = new PeerDirectory(ctx, notifications, readiness);
        this.duty = new DutyCycle(new Core(), readiness,
                Math.min(MAX_BLOCK_MILLIS, Math.max(1, ctx.config().heartbeat().toMillis() / 2)), lease);
    }

    // ------------------------------------------------------------------ lifecycle (engine's lock)

    /** Binds this agent's control listener on {@code port} (0: any free one); returns the port bound. */
    int bind(int port) {
        listener = ControlListener.bind(ctx.config(), port, readiness);
        return listener.port();
    }

    String advertiseHost() {
        return listener.advertiseHost();
    }

    /** Starts the agent's thread, which waits as {@link EngineConfig#idle()} says. */
    void start() {
        AgentRunner r = new AgentRunner(threadName, duty, ctx.config().idle(), readiness);
        runner = r;
        // commands and transport completions; while a caller polls, the runner leaves its park alone
        commands.wakeWith(r::wake);
        stopWakes = ctx.transport().wakeOnProgress(ctx.config().agents() == 1 ? r::wake : () -> {
            if (awaitsTransport) {
                r.wake();
            }
        });
        r.start();
    }

    /** Closes this agent's listener again (a later agent of the engine could not bind). */
    void unbind() {
        listener.close();
        listener = null;
    }

    /**
     * Marks the agent closed (commands are refused from now on) and asks its thread to stop, which
     * shuts the agent down; without a thread, shuts it down on the caller.
     */
    void close() {
        commands.close();
        AgentRunner r = runner;
        if (r == null) {
            shutdown();
        } else {
            r.requestStop();
        }
    }

    /** Waits up to {@code timeoutMillis} for the agent's thread to have shut the agent down. */
    void awaitClosed(long timeoutMillis) throws InterruptedException {
        AgentRunner r = runner;
        if (r != null && !r.awaitStopped(timeoutMillis)) {
            LOG.log(System.Logger.Level.WARNING, "agent {0} did not stop in time", threadName);
        }
    }

    private void shutdown() {
        try {
            duty.shutDown();
            stopWakes.run();
            commands.drainOnClose();
            directory.closeAll(new TransferException(Code.CANCELED, "engine " + ctx.name() + " closed"));
            if (listener != null) {
                listener.close();
            }
            readiness.close();
        } finally {
            onShutdown.run();
        }
    }

    // ------------------------------------------------------------------ the duty cycle

    int doWork() {
        return duty.doWork();
    }

    int progress() {
        return duty.progress();
    }

    private int cycle() {
        dutyCycles++;
        int work = commands.runAll();
        if (commands.isClosed() && runner == null) {
            return work;
        }
        long now = ctx.now();
        if (now - lastAccept >= ACCEPT_POLL_NANOS) {
            lastAccept = now;
            work += listener == null ? 0 : listener.acceptInto(directory, ctx.name());
        }
        work += directory.doWork(now);
        if (ctx.config().agents() > 1) {
            awaitsTransport = !directory.quiet();
        }
        if (now - lastHousekeeping > HOUSEKEEPING_NANOS) {
            lastHousekeeping = now;
            if (ctx.agent() == 0) {
                work += ctx.registry().reclaim();
            }
            work += directory.housekeeping(now);
        }
        return work;
    }

    /** What the duty cycle, run by the agent thread or a caller of progress(), does for this agent. */
    private final class Core implements DutyCycle.Owner {

        @Override
        public int cycle() {
            return ProgressAgent.this.cycle();
        }

        @Override
        public boolean idle() {
            return commands.isEmpty() && directory.quiet();
        }

        @Override
        public int drive() {
            return ctx.transport().drive();
        }

        @Override
        public boolean driveDue() {
            return drivable && directory.outstandingRequests() > 0;
        }

        @Override
        public void failed(Throwable e) {
            LOG.log(System.Logger.Level.ERROR, "progress agent " + threadName + " failed", e);
            directory.failAll(new TransferException(Code.BACKEND, "engine failure: " + e, e));
        }

        @Override
        public void stopped() {
            shutdown();
        }
    }

    /** Duty cycles run so far; a racy read. */
    long dutyCycles() {
        return dutyCycles;
    }
}
