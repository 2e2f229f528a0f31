package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import io.tcpx4j.api.TransferException;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;

/**
 * One plugin connect (per handle) or accept (per listener), run on a set-up thread until it yields a
 * comm, fails, or passes its deadline, so that the caller never waits inside the plugin.
 *
 * <p>Why: the ncclNet ABI asks connect and accept to return a null comm until the peer is there, but
 * not every plugin does (nccl-fastsocket's accept waits in accept(2) for the peer). A caller that
 * called such a plugin on its own thread would stop, and with it everything that thread drives, such
 * as sending the handle the peer needs before it can connect.
 *
 * <p>The caller {@link #poll}s: 0 means "not yet". Once the comm is there the next poll claims it;
 * a failure is thrown by every poll; a poll after the deadline abandons the call and throws. An
 * abandoned call never calls the plugin again: a comm it still produces is handed to the orphan
 * consumer (closed), and {@link #abandon}'s release action (closeListen) runs as soon as no plugin
 * call is in flight — at once, or on the set-up thread when a blocked call returns. A call that never
 * returns leaves its (daemon) thread behind; nothing waits for it.
 *
 * <p>Thread-safe. The lock is never held across a plugin call.
 */
final class SetupCall implements Runnable {

    /** One plugin call: returns ncclResult_t and writes the comm (or null) into {@code out}. */
    interface Step {
        int call(Memory out);
    }

    private static final long MIN_PARK_NANOS = 20_000;
    private static final long MAX_PARK_NANOS = 1_000_000;

    private final String what;
    private final String plugin;
    private final Step step;
    private final LongConsumer orphan;
    private final Duration timeout;
    private final long deadlineNanos;
    private final long cudaContext;
    private final Memory out = new Memory(8);

    private boolean inCall;
    private boolean abandoned;
    private boolean finished;
    private long comm;
    private TransferException failure;
    private Runnable release;

    /**
     * @param what    the call, for messages ({@code connect}, {@code accept})
     * @param plugin  the plugin's name and library, for messages
     * @param orphan  closes a comm nobody will claim
     */
    SetupCall(String what, String plugin, Step step, LongConsumer orphan, Duration timeout) {
        this.what = what;
        this.plugin = plugin;
        this.step = step;
        this.orphan = orphan;
        this.timeout = timeout;
        this.deadlineNanos = System.nanoTime() + timeout.toNanos();
        // TCPX binds a comm to the CUDA device current on the thread that calls connect
        // (gpu_current_dev in its cuda_wrapper): the set-up thread takes the caller's context.
        this.cudaContext = CudaDriverContext.current();
    }

    /** Starts the set-up thread's work. */
    SetupCall start(Executor executor) {
        try {
            executor.execute(this);
        } catch (RejectedExecutionException e) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "the TCPX transport is closed", e);
        }
        return this;
    }

    @Override
    public void run() {
        CudaDriverContext.makeCurrent(cudaContext);
        long park = MIN_PARK_NANOS;
        while (true) {
            synchronized (this) {
                if (abandoned) {
                    finished = true;
                    return;
                }
                inCall = true;
            }
            int rc;
            long got = 0;
            TransferException thrown = null;
            try {
                out.setLong(0, 0);
                rc = step.call(out);
                if (rc == NcclResult.SUCCESS) {
                    got = out.getLong(0);
                }
            } catch (RuntimeException | Error e) {
                rc = -1;
                thrown = new TransferException(TransferException.Code.BACKEND, plugin + ": " + what + " failed: " + e, e);
            }
            long orphaned = 0;
            Runnable toRelease = null;
            boolean done;
            synchronized (this) {
                inCall = false;
                if (thrown != null) {
                    failure = thrown;
                } else if (rc != NcclResult.SUCCESS) {
                    TransferException e = NcclResult.control(what, rc);
                    failure = new TransferException(e.code(), plugin + ": " + e.getMessage());
                } else if (got != 0) {
                    comm = got;
                } else if (System.nanoTime() - deadlineNanos > 0) {
                    failure = timedOut();
                }
                if (abandoned) {
                    orphaned = comm;
                    comm = 0;
                    toRelease = release;
                    release = null;
                    finished = true;
                }
                finished |= failure != null || comm != 0;
                done = finished;
            }
            releaseQuietly(orphaned, toRelease);
            if (done) {
                return;
            }
            LockSupport.parkNanos(park);
            park = Math.min(park * 2, MAX_PARK_NANOS);
        }
    }

    /**
     * The comm once the plugin produced it (claimed by this call: later polls return 0), else 0.
     * Throws the call's failure, or a timeout once the deadline passed (which abandons the call).
     */
    long poll() {
        TransferException timeoutError = null;
        synchronized (this) {
            if (comm != 0) {
                long c = comm;
                comm = 0;
                return c;
            }
            if (failure != null) {
                throw failure;
            }
            if (abandoned) {
                throw new TransferException(TransferException.Code.INVALID_PARAM, plugin + ": " + what + " was abandoned");
            }
            if (System.nanoTime() - deadlineNanos <= 0) {
                return 0;
            }
            timeoutError = timedOut();
            failure = timeoutError;
        }
        abandon(null);
        throw timeoutError;
    }

    /**
     * Stops the call. {@code release} (may be null) runs once no plugin call is in flight: now, on
     * this thread, or later on the set-up thread. A comm produced and not claimed is closed.
     */
    void abandon(Runnable release) {
        long orphaned;
        boolean now;
        synchronized (this) {
            abandoned = true;
            orphaned = comm;
            comm = 0;
            now = !inCall;
            if (!now) {
                this.release = release;
            }
        }
        releaseQuietly(orphaned, now ? release : null);
    }

    /**
     * Whether nobody will claim this call any more: it ended (comm, failure or deadline) and one more
     * timeout has passed since its deadline, while a caller that still wants it polls all along.
     */
    synchronized boolean stale(long nowNanos) {
        return (finished || failure != null) && nowNanos - deadlineNanos > timeout.toNanos();
    }

    /** Whether a plugin call of this set-up is running right now (tests and messages). */
    synchronized boolean inCall() {
        return inCall;
    }

    private TransferException timedOut() {
        return new TransferException(TransferException.Code.BACKEND, plugin + ": " + what + " did not complete within "
                + timeout.toMillis() + " ms (TcpxOptions.setupTimeout): the peer never "
                + ("accept".equals(what) ? "connected" : "accepted")
                + ", or the plugin's " + what + " blocks; the call is abandoned");
    }

    private void releaseQuietly(long orphaned, Runnable toRelease) {
        try {
            if (orphaned != 0) {
                orphan.accept(orphaned);
            }
        } catch (RuntimeException e) {
            log(e);
        }
        try {
            if (toRelease != null) {
                toRelease.run();
            }
        } catch (RuntimeException e) {
            log(e);
        }
    }

    private void log(RuntimeException e) {
        System.getLogger(SetupCall.class.getName()).log(System.Logger.Level.WARNING,
                "{0}: releasing an abandoned {1} failed: {2}", plugin, what, e.getMessage());
    }
}
