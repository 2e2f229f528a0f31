package io.tcpx4j.domain.port.out;

import io.tcpx4j.api.EngineScatterGather;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;

/**
 * Batched copies on the data path: scatters fragmented receives from bounce pages into their
 * destinations, and gathers the pieces of packed chunks in device memory before their send (and
 * scatters them after a receive that landed in place). Batches: every receive {@link #add added} and
 * every {@link #copy} until {@link #submit()} goes out as one unit (one kernel launch on a GPU) whose
 * completion {@link #isDone(long)} reports; only then may the engine consume those receives or send
 * those chunks.
 *
 * <p><b>Not thread-safe</b>: driven by the engine's progress agent.
 */
public interface ScatterGather extends EngineScatterGather {

    /** Queues the fragments of one completed receive whose destination is {@code destination}. */
    void add(NetRequest request, long destination, MemoryKind destinationKind);

    /**
     * Queues the fragments of one completed receive of a packed chunk: descriptors {@code [first, end)}
     * of {@code addresses} and {@code lengths} back to back, so that chunk offset {@code o} lands in the
     * descriptor that covers it (a fragment that spans two descriptors is split between them). The
     * descriptors are memory of {@code kind}.
     */
    void add(NetRequest request, long[] addresses, long[] lengths, int first, int end, MemoryKind kind);

    /**
     * Queues a copy of {@code length} bytes, memory of {@code kind} on both sides, in the batch: how packed
     * chunks in device memory are gathered before their send and scattered when they landed in place.
     */
    void copy(long source, long destination, long length, MemoryKind kind);

    /**
     * Whether this scatter-gather reaches memory of {@code kind}: can scatter receives into it and copy within
     * it. The engine packs descriptors of a kind into shared chunks only where this holds.
     */
    default boolean reaches(MemoryKind kind) {
        return kind == MemoryKind.DRAM;
    }

    /**
     * A new scatter-gather like this one (same device, same settings) for another progress agent of the
     * same engine, which drives it on its own thread while this one runs; the engine closes it. Default:
     * NOT_SUPPORTED, and an engine with several agents refuses to start with such a scatter-gather.
     */
    default ScatterGather another() {
        throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                getClass().getSimpleName() + " cannot serve more than one progress agent");
    }

    /** Sends everything added since the last submit as one batch: its ticket, or 0 if there was none. */
    long submit();

    /** Whether a batch has completed. Throws a TransferException (BACKEND) if it failed. */
    boolean isDone(long ticket);

    /**
     * Whether every batch is complete when {@link #submit()} returns (the CPU copies inside the calls), so
     * that no batch is ever worth polling for. False (the default) for one whose batches run on a device
     * and finish later. Constant for its life.
     */
    default boolean completesOnSubmit() {
        return false;
    }

    @Override
    default void close() {
    }
}
