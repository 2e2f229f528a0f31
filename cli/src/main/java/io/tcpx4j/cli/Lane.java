package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BooleanSupplier;

/**
 * One initiator thread's transfers of one row shape: up to {@code depth} transfers in flight, transfer
 * i on slot {@code i mod depth} (each slot a slice of both buffers of its own), the next one on a slot
 * posted once the previous one there has ended. With a depth of one this is one transfer at a time,
 * each waited for before the next (nixlbench with one thread).
 *
 * <p>Per transfer it measures prep (building the descriptor lists and getting the session), post (the
 * {@code write}/{@code read} call) and transmission (from the post's return until the transfer is DONE:
 * with one in flight when the wait returns, with more when the engine completes it, so that a transfer
 * that ends while the thread waits for an older one is not charged for that wait).
 *
 * <p><b>Not thread-safe</b>: one thread runs a lane.
 */
final class Lane {

    /** A single transfer that takes longer than this fails the run. */
    static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(60);

    private final TransferEngine engine;
    private final String target;
    private final boolean write;
    private final List<MemoryDescriptor>[] local;
    private final List<MemoryDescriptor>[] remote;
    private final BooleanSupplier stopped;
    private final Progress progress;
    private final Transfer[] inFlight;
    private final long[] prepNanos;
    private final long[] postNanos;
    private final long[] postedAt;
    /** When the engine completed each slot's transfer (0: not yet); only kept with more than one slot. */
    private final AtomicLongArray endedAt;

    /**
     * @param local   per slot, the local descriptors of its transfers
     * @param remote  per slot, the remote descriptors (pairing up with {@code local})
     * @param stopped polled before each post: true ends the lane after the transfers in flight
     */
    Lane(TransferEngine engine, String target, boolean write, List<MemoryDescriptor>[] local,
         List<MemoryDescriptor>[] remote, BooleanSupplier stopped, Progress progress) {
        this.engine = engine;
        this.target = target;
        this.write = write;
        this.local = local.clone();
        this.remote = remote.clone();
        this.stopped = stopped;
        this.progress = progress;
        int depth = local.length;
        this.inFlight = new Transfer[depth];
        this.prepNanos = new long[depth];
        this.postNanos = new long[depth];
        this.postedAt = new long[depth];
        this.endedAt = depth > 1 ? new AtomicLongArray(depth) : null;
    }

    /**
     * Makes {@code count} transfers, fewer when {@code deadline} (a {@link System#nanoTime()}, 0: none)
     * passes first (at least one either way), then waits for those in flight.
     *
     * @param stats records each transfer's times (null: unmeasured)
     * @param notes per slot, the notification its last transfer carries (null: none)
     * @return the transfers made, or -1 when stopped
     */
    long run(long count, long deadline, RowStats stats, byte[][] notes) throws InterruptedException {
        int depth = inFlight.length;
        long posted = 0;
        while (posted < count && !stopped.getAsBoolean()
                && (deadline == 0 || posted == 0 || System.nanoTime() - deadline < 0)) {
            int k = (int) (posted % depth);
            if (inFlight[k] != null) {
                finish(k, stats);
            }
            byte[] note = notes != null && posted + depth >= count ? notes[k] : null;
            post(k, note);
            posted++;
        }
        // oldest first; after a failure (an exception above) the others are left to the engine, and the
        // caller waits for it to drain before freeing the buffers
        for (int i = 0; i < depth; i++) {
            int k = (int) ((posted + i) % depth);
            if (inFlight[k] != null) {
                finish(k, stats);
            }
        }
        return stopped.getAsBoolean() ? -1 : posted;
    }

    private void post(int k, byte[] note) {
        long t0 = System.nanoTime();
        List<MemoryDescriptor> l = local[k];
        List<MemoryDescriptor> r = remote[k];
        Session session = engine.session(target);
        long t1 = System.nanoTime();
        if (endedAt != null) {
            endedAt.set(k, 0);
        }
        Transfer x = write ? session.write(l, r, note) : session.read(l, r, note);
        long t2 = System.nanoTime();
        if (endedAt != null) {
            x.completion().whenComplete((done, failure) -> endedAt.set(k, System.nanoTime()));
        }
        inFlight[k] = x;
        prepNanos[k] = t1 - t0;
        postNanos[k] = t2 - t1;
        postedAt[k] = t2;
    }

    /** Waits for slot {@code k}'s transfer to end (a caller-driven engine is driven meanwhile); records it. */
    private void finish(int k, RowStats stats) throws InterruptedException {
        Transfer x = inFlight[k];
        inFlight[k] = null;
        TransferStatus status = engine.driveUntilEnded(x, TRANSFER_TIMEOUT);
        long now = System.nanoTime();
        if (status == TransferStatus.IN_PROGRESS) {
            x.release();
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            throw new TransferException(TransferException.Code.REMOTE_DISCONNECT, "a " + x.bytes()
                    + "-byte transfer did not finish within " + TRANSFER_TIMEOUT.toSeconds() + " s");
        }
        if (status != TransferStatus.DONE) {
            throw x.error().orElseGet(() -> new TransferException(TransferException.Code.UNKNOWN, "transfer " + status));
        }
        if (stats != null) {
            long ended = endedAt != null && endedAt.get(k) != 0 ? endedAt.get(k) : now;
            stats.record(prepNanos[k], postNanos[k], ended - postedAt[k]);
        }
        progress.advance(1);
    }
}
