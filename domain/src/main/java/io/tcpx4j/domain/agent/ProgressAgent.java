package io.tcpx4j.domain.agent;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Progress;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.control.ControlListener;
import io.tcpx4j.domain.idle.CpuContention;
import io.tcpx4j.domain.idle.IdleSelector;
import io.tcpx4j.domain.idle.IdleWait;
import io.tcpx4j.domain.peer.EngineContext;
import io.tcpx4j.domain.peer.PeerDirectory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.registration.RegionRegistry;
import io.tcpx4j.domain.transfer.PostedTransfer;
import io.tcpx4j.domain.port.out.Capability;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;

import java.time.Duration;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One progress agent of an engine: the peers it serves ({@link EngineContext#serves}) with their
 * connections, transfers and notifications, its control listener, its command queue, and its one
 * driver ({@link Progress}): a thread of its own (an Agrona {@link AgentRunner} that waits by
 * {@link IdleWait}), or application threads calling {@link #doWork()} and {@link #driveUntilEnded}. The
 * agents of one engine share its registered memory and notification queue and nothing else, so they run
 * side by side without locks on the data path; a peer dials the agent that serves it through the port
 * conn-info lists for it.
 *
 * <p>Thread-safe as the engine uses it: {@link #commands}, {@link #doWork()}, {@link #driveUntilEnded}
 * and the racy counters from any thread (one thread drives at a time: a call that finds another driving
 * returns at once), the lifecycle under the engine's lock.
 */
public final class ProgressAgent implements Agent, PostedTransfer.Driver {

    private static final System.Logger LOG = System.getLogger(ProgressAgent.class.getName());
    /**
     * How often a cycle polls the agent's sockets (new control connections are rare, and a handshake takes
     * several round trips; a driver's wait, or the poll of a cycle that serves several connections, sees a
     * waiting connection sooner) and does housekeeping (deregistration, queued work past its timeout,
     * redials).
     */
    private static final long HOUSEKEEPING_NANOS = 1_000_000;
    /** Longest a driver blocks: bounds how late housekeeping (deregistration, redials) runs. */
    private static final long MAX_BLOCK_MILLIS = 100;

    public final CommandQueue commands;
    public final PeerDirectory directory;
    private final EngineContext ctx;
    // what the duty cycle needs of the context, taken once
    private final String engineName;
    private final Clock clock;
    /** The registry whose deregistered regions this agent reclaims in housekeeping: agent 0's; null on the others. */
    private final RegionRegistry reclaims;
    private final String threadName;
    private final IdleSelector readiness = new IdleSelector();
    private final long maxBlockMillis;
    private final long spinNanos;
    /** Whether the engine runs more than one agent ({@code EngineConfig.agents()}). */
    private final boolean severalAgents;
    /**
     * Whether the transport and the unpacker announce every event that moves requests on (a completion
     * wakes the driver, or the transport's sockets are in its selector, and no batch is left to poll), so
     * that a driver may block while requests are out.
     */
    private final boolean signalled;
    /** What the engine does once this agent has shut down (the last one frees what they share). */
    private final Runnable onShutdown;
    /** Held by whoever runs a duty cycle or blocks on {@link #readiness}: one driver at a time. */
    private final AtomicBoolean driving = new AtomicBoolean();
    private volatile boolean shutDown;

    // driver only (dutyCycles is read racily by stats())
    private long dutyCycles;
    private long lastHousekeeping;
    private boolean acceptDue;

    /**
     * Whether this agent had anything the transport's progress can move (requests out, channels being
     * set up) at the end of its last cycle. The transport wakes every listener of an engine at each of
     * its completions; with several agents, one that has nothing out lets the wake pass, so that a busy
     * agent's completions do not wake the idle ones. A completion racing with the update finds the agent
     * that posted it still spinning after that cycle's work.
     */
    private volatile boolean awaitsTransport = true;

    private ControlListener listener;
    private AgentRunner runner;
    private Runnable stopWakes = () -> { };

    public ProgressAgent(EngineContext ctx, CommandQueue commands, Queue<Notification> notifications, Runnable onShutdown) {
        this.ctx = ctx;
        this.commands = commands;
        this.onShutdown = onShutdown;
        this.engineName = ctx.name();
        this.clock = ctx.clock();
        this.reclaims = ctx.agent() == 0 ? ctx.registry() : null;
        this.severalAgents = ctx.config().agents() > 1;
        this.threadName = "tcpx4j-agent-" + ctx.name() + (severalAgents ? "-" + ctx.agent() : "");
        this.directory = new PeerDirectory(ctx, notifications, readiness);
        this.maxBlockMillis = Math.min(MAX_BLOCK_MILLIS, Math.max(1, ctx.config().heartbeat().toMillis() / 2));
        this.spinNanos = ctx.config().progress().spin().toNanos();
        Set<Capability> caps = ctx.transport().capabilities();
        this.signalled = (caps.contains(Capability.PROGRESS_WAKEUPS) || caps.contains(Capability.DRIVER_SOCKETS))
                && ctx.unpacker().completesOnSubmit();
    }

    // ------------------------------------------------------------------ lifecycle (engine's lock)

    /** Binds this agent's control listener on {@code port} (0: any free one); returns the port bound. */
    public int bind(int port) {
        listener = ControlListener.bind(ctx.config(), port, readiness, () -> acceptDue = true);
        return listener.port();
    }

    public String advertiseHost() {
        return listener.advertiseHost();
    }

    /** Closes this agent's listener again (a later agent of the engine could not bind). */
    public void unbind() {
        listener.close();
        listener = null;
    }

    /**
     * Lets commands and transport events wake the driver, and with {@link Progress.Driver#THREAD} starts
     * the agent's thread; with {@link Progress.Driver#CALLER} the application's threads drive.
     */
    public void start() {
        commands.wakeWith(readiness::wake);
        if (ctx.transport().capabilities().contains(Capability.PROGRESS_WAKEUPS)) {
            stopWakes = ctx.transport().wakeOnProgress(!severalAgents ? readiness::wake : () -> {
                if (awaitsTransport) {
                    readiness.wake();
                }
            });
        }
        if (ctx.config().progress().driver() == Progress.Driver.THREAD) {
            IdleWait idle = new IdleWait(spinNanos, () -> awaitEvent(maxBlockMillis),
                    CpuContention.fromSchedstat(), clock);
            runner = new AgentRunner(idle, this::logFailure, null, this);
            AgentRunner.startOnThread(runner, r -> {
                Thread t = new Thread(r);
                t.setDaemon(true);
                return t;
            });
        }
    }

    /**
     * Refuses further commands, stops the agent's thread (waiting up to {@code timeoutMillis}) which shuts
     * the agent down; without a thread, shuts it down on the caller once no caller drives it.
     */
    public void close(long timeoutMillis) {
        commands.close();
        readiness.wake();
        AgentRunner r = runner;
        if (r != null) {
            try {
                r.close((int) Math.min(Integer.MAX_VALUE, Math.max(1, timeoutMillis)), t -> {
                    throw new StillRunning();
                });
            } catch (StillRunning e) {
                LOG.log(System.Logger.Level.WARNING, "agent {0} did not stop in time", threadName);
                return;
            }
            if (shutDown) {
                return;
            }
            // the thread ended without closing the agent (an Error escaped its duty cycle)
        }
        while (!driving.compareAndSet(false, true)) {
            readiness.wake(); // a caller's cycle or wait is finishing; then none starts
            Thread.onSpinWait();
        }
        try {
            shutdown();
        } finally {
            driving.set(false);
        }
    }

    /** Ends Agrona's close when the thread outlives the timeout: the close gives up waiting. */
    private static final class StillRunning extends RuntimeException {
        StillRunning() {
            super(null, null, false, false);
        }
    }

    private void shutdown() {
        if (shutDown) {
            return;
        }
        shutDown = true;
        try {
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

    // ------------------------------------------------------------------ Agrona's Agent (the thread)

    @Override
    public String roleName() {
        return threadName;
    }

    /**
     * One duty cycle, unless another thread drives the agent right now or it is shut down: runs queued
     * commands, accepts control connections, moves every connection on. Returns the work done (0: none).
     * An error fails this agent's connections; the agent goes on.
     */
    @Override
    public int doWork() {
        if (shutDown || !driving.compareAndSet(false, true)) {
            return 0;
        }
        try {
            return shutDown ? 0 : cycle();
        } catch (RuntimeException e) {
            failed(e);
            return 1;
        } finally {
            driving.set(false);
        }
    }

    /** The agent's thread is ending: shut the agent down on it. */
    @Override
    public void onClose() {
        shutdown();
    }

    /** What escapes a duty cycle on the agent's thread (an Error; {@link #doWork()} handles the rest). */
    private void logFailure(Throwable e) {
        LOG.log(System.Logger.Level.ERROR, "progress agent " + threadName + " failed", e);
    }

    private void failed(Throwable e) {
        logFailure(e);
        directory.failAll(new TransferException(Code.BACKEND, "engine failure: " + e, e));
    }

    // ------------------------------------------------------------------ the caller as driver

    /**
     * Drives the agent on the calling thread until {@code x} ends or {@code timeout} passes, waiting as the
     * agent's thread would between cycles (spin, then block in the kernel); returns its status.
     */
    @Override
    public TransferStatus driveUntilEnded(PostedTransfer x, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        IdleWait idle = new IdleWait(spinNanos, () -> awaitEvent(Math.min(maxBlockMillis,
                Math.max(0, (deadline - System.nanoTime()) / 1_000_000))), CpuContention.ofCurrentThread(), clock);
        while (!x.isEnded()) {
            int work = doWork();
            if (x.isEnded() || System.nanoTime() - deadline >= 0) {
                break;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            idle.idle(work);
        }
        return x.status();
    }

    // ------------------------------------------------------------------ the duty cycle

    /**
     * Blocks the driver for up to {@code timeoutMillis} on the agent's sockets and wake-ups, if only an
     * event can move the agent on, and returns true; true at once if a command came since the last cycle
     * (the next cycle runs it, with no pause); false at once if something must be polled or another thread
     * drives.
     */
    boolean awaitEvent(long timeoutMillis) {
        if (!driving.compareAndSet(false, true)) {
            return false;
        }
        try {
            if (!commands.isEmpty() && !shutDown) {
                return true;
            }
            if (shutDown || !blockable()) {
                return false;
            }
            readiness.await(timeoutMillis, this::blockable);
            return true;
        } finally {
            driving.set(false);
        }
    }

    /** Whether only a socket event, a command or a wake-up can move the agent on; called by the driver. */
    private boolean blockable() {
        return commands.isEmpty() && !commands.isClosed() && directory.quiet(signalled);
    }

    private int cycle() {
        dutyCycles++;
        int work = commands.runAll();
        long now = clock.nanoTime();
        boolean housekeeping = now - lastHousekeeping >= HOUSEKEEPING_NANOS;
        if (housekeeping) {
            readiness.poll(); // a connection waiting on the listener sets acceptDue
        }
        if (acceptDue) {
            acceptDue = false;
            work += listener == null ? 0 : listener.acceptInto(directory::accepted, engineName);
        }
        work += directory.doWork(now);
        if (severalAgents) {
            awaitsTransport = !directory.quiet(false);
        }
        if (housekeeping) {
            lastHousekeeping = now;
            if (reclaims != null) {
                work += reclaims.reclaim();
            }
            work += directory.housekeeping(now);
        }
        return work;
    }

    /** Duty cycles run so far; a racy read. */
    public long dutyCycles() {
        return dutyCycles;
    }

    /** How often a driver blocked in the kernel waiting for this agent's events so far. */
    public long blocks() {
        return readiness.blocks();
    }
}
