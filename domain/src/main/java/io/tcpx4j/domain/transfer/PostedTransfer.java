package io.tcpx4j.domain.transfer;

import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.idle.CpuContention;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.ExecutionException;

/**
 * A posted transfer. The engine's agent ends it exactly once ({@link #succeed()} or {@link #fail});
 * {@link #release()} from any thread marks it RELEASED at once, while the agent finishes its chunks in
 * the background (the wire streams stay in step); its end then changes nothing the application sees.
 *
 * <p>Thread-safe.
 */
public final class PostedTransfer implements Transfer {

    public final long id;
    public final long bytes;
    /** What {@link #await} drives on the caller's thread, or null: the agent's thread drives. */
    private final Driver callerDriven;
    /** How long {@link #await} watches the status before it parks, where the agent's thread drives. */
    private final long spinNanos;

    /** Drives a transfer's agent on the calling thread until the transfer ends (a caller-driven engine). */
    public interface Driver {
        /** Drives until {@code x} ends or {@code timeout} passes; returns its status. */
        TransferStatus driveUntilEnded(PostedTransfer x, Duration timeout) throws InterruptedException;
    }
    private volatile TransferStatus status = TransferStatus.IN_PROGRESS;
    private volatile TransferException error;
    private final CompletableFuture<Transfer> done = new CompletableFuture<>();

    /** A transfer that ends inside the call that made it: nothing to drive or watch. */
    public PostedTransfer(long id, long bytes) {
        this(id, bytes, null, 0);
    }

    /**
     * {@code callerDriven}: what {@link #await} drives where the caller drives the agent, else null;
     * {@code spinNanos}: otherwise, how long await watches the status before it parks.
     */
    public PostedTransfer(long id, long bytes, Driver callerDriven, long spinNanos) {
        this.id = id;
        this.bytes = bytes;
        this.callerDriven = callerDriven;
        this.spinNanos = spinNanos;
    }

    @Override
    public TransferStatus status() {
        return status;
    }

    @Override
    public Optional<TransferException> error() {
        return Optional.ofNullable(error);
    }

    @Override
    public CompletionStage<Transfer> completion() {
        return done.minimalCompletionStage();
    }

    /**
     * Blocks until the agent's thread ends the transfer, after watching its status for the engine's spin
     * (a short transfer usually ends meanwhile, and the agent then needs no wake-up of this thread; not
     * while its CPUs are contended, {@link CpuContention}); where the caller drives the agent, drives
     * it on this thread instead ({@link Driver}).
     */
    @Override
    public TransferStatus await(Duration timeout) throws InterruptedException {
        if (isEnded()) {
            return status;
        }
        if (callerDriven != null) {
            return callerDriven.driveUntilEnded(this, timeout);
        }
        if (spinNanos > 0) {
            long start = System.nanoTime();
            if (!CpuContention.ofCurrentThread().contended(start)) {
                long spin = Math.min(spinNanos, timeout.toNanos());
                while (!isEnded() && System.nanoTime() - start < spin) {
                    Thread.onSpinWait();
                }
                if (isEnded()) {
                    return status;
                }
            }
        }
        try {
            done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            // reported through status() and error()
        } catch (TimeoutException e) {
            return status;
        }
        return status;
    }

    @Override
    public void release() {
        synchronized (this) {
            if (status == TransferStatus.IN_PROGRESS) {
                status = TransferStatus.RELEASED;
                error = new TransferException(TransferException.Code.CANCELED, "released by the application");
            }
        }
    }

    @Override
    public long bytes() {
        return bytes;
    }

    /** Ends the transfer successfully (a released one ends RELEASED). Only the first end counts. */
    public void succeed() {
        boolean wasReleased;
        synchronized (this) {
            if (done.isDone()) {
                return;
            }
            wasReleased = status == TransferStatus.RELEASED;
            if (!wasReleased) {
                status = TransferStatus.DONE;
            }
        }
        if (wasReleased) {
            done.completeExceptionally(error);
        } else {
            done.complete(this);
        }
    }

    /** Ends the transfer with an error (a released one stays RELEASED). Only the first end counts. */
    public void fail(TransferException e) {
        synchronized (this) {
            if (done.isDone()) {
                return;
            }
            if (status != TransferStatus.RELEASED) {
                status = TransferStatus.FAILED;
                error = e;
            }
        }
        done.completeExceptionally(error);
    }

    public boolean isEnded() {
        return done.isDone();
    }

    @Override
    public String toString() {
        return "Transfer[" + id + ", " + bytes + " bytes, " + status + "]";
    }
}
