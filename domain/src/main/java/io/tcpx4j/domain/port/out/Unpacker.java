package io.tcpx4j.domain.port.out;

import io.tcpx4j.api.MemoryKind;

/**
 * Scatters fragmented receives from bounce pages into their destinations. Batches: every receive
 * {@link #add added} until {@link #submit()} goes out as one unit (one kernel launch on a GPU) whose
 * completion {@link #isDone(long)} reports; only then may the engine consume those receives.
 *
 * <p><b>Not thread-safe</b>: driven by the engine's progress agent.
 */
public interface Unpacker extends AutoCloseable {

    /** Queues the fragments of one completed receive whose destination is {@code destination}. */
    void add(NetRequest request, long destination, MemoryKind destinationKind);

    /** Sends everything added since the last submit as one batch: its ticket, or 0 if there was none. */
    long submit();

    /** Whether a batch has completed. Throws a TransferException (BACKEND) if it failed. */
    boolean isDone(long ticket);

    @Override
    default void close() {
    }
}
