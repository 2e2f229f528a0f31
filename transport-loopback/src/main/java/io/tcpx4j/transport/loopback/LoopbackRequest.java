package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.NetRequest;

/**
 * One of a comm's 16 pooled request slots. The caller thread fills the posting fields and then
 * publishes them by bumping the comm's volatile {@code posted} counter; the loop's thread (an I/O thread,
 * or the caller itself where the transport has none) fills the completion fields and publishes them with
 * the volatile {@link #done}.
 *
 * <p><b>Not thread-safe</b> beyond that hand-off.
 */
final class LoopbackRequest implements NetRequest {

    static final int FREE = 0;
    static final int POSTED = 1;
    /** A receive that tested done and awaits {@code consumed}. */
    static final int COMPLETED = 2;

    /** The comm whose ring holds this slot, for the transport's checks; the request asks nothing of it. */
    final Comm comm;
    /** The comm's loop, told when the request completes. */
    private final Loop loop;
    final int slot;

    // Caller thread, before publication.
    int state = FREE;
    long seq;
    long address;
    int size;
    /** Where the send reads from: the caller's memory, or the pinned staging copy of CUDA memory. */
    long source;
    /** The staging copy of a CUDA source; the loop thread clears it once the copy is seen done. */
    long stagingTicket;
    boolean bounce;
    int pageCount;
    int[] pages;
    /** The receive comm's bounce pool, once a bounce receive took pages from it. */
    BouncePool pool;
    long fragmentTable;

    // Loop thread, published by done.
    int stripesLeft;
    int received;
    int fragments;
    long doneNanos;
    volatile boolean done;

    LoopbackRequest(Comm comm, Loop loop, int slot) {
        this.comm = comm;
        this.loop = loop;
        this.slot = slot;
    }

    /** Loop thread: one socket finished its stripe; the last one completes the request. */
    void stripeDone() {
        if (--stripesLeft == 0) {
            if (bounce) {
                fragments = (received + BouncePool.PAGE - 1) / BouncePool.PAGE;
            }
            doneNanos = System.nanoTime();
            done = true;
            loop.signal();
        }
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int fragmentCount() {
        return done ? fragments : 0;
    }

    @Override
    public long fragmentsAddress() {
        return fragmentTable;
    }

    @Override
    public long bounceBase() {
        return bounce ? pool.base : 0;
    }

    @Override
    public long bounceBytes() {
        return bounce ? pool.bytes : 0;
    }

    @Override
    public MemoryKind bounceKind() {
        return MemoryKind.DRAM;
    }

    @Override
    public String toString() {
        return "LoopbackRequest[seq " + seq + ", " + size + " B, slot " + slot + ", state " + state + "]";
    }
}
