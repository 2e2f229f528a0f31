package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;

/**
 * The requests one comm has posted, oldest first: {@code [head, head+tested)} have tested complete and
 * wait to be retired (a receive waits for its unpack, then is consumed), {@code [head+tested,
 * head+count)} are still in flight. The transport lets only the oldest untested request be tested and
 * only the oldest completed one be consumed, which a ring expresses directly. Slots are preallocated, so
 * posting a chunk allocates nothing.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent, except {@link #count()} (a racy read for stats).
 */
final class RequestRing {

    static final int SIZE = NetTransport.MAX_REQUESTS;
    /** Ticket of a completed receive whose unpack batch has not been submitted yet. */
    private static final long UNSUBMITTED = -1;

    private final ChunkPlan[] plans = new ChunkPlan[SIZE];
    private final NetRequest[] requests = new NetRequest[SIZE];
    private final long[] destinations = new long[SIZE];
    private final MemoryKind[] kinds = new MemoryKind[SIZE];
    private final long[] tickets = new long[SIZE];
    private int head;
    private int count;
    private int tested;

    private static int slot(int head, int i) {
        return (head + i) & (SIZE - 1);
    }

    /** Requests held on the transport. */
    int count() {
        return count;
    }

    /** Records a posted send. */
    void add(ChunkPlan plan, NetRequest request) {
        int s = slot(head, count);
        plans[s] = plan;
        requests[s] = request;
        count++;
    }

    /** Records a posted receive into {@code destination} (memory of {@code kind}). */
    void add(ChunkPlan plan, NetRequest request, long destination, MemoryKind kind) {
        int s = slot(head, count);
        plans[s] = plan;
        requests[s] = request;
        destinations[s] = destination;
        kinds[s] = kind;
        tickets[s] = 0;
        count++;
    }

    /** The oldest request still in flight, or null if every posted one has tested complete. */
    NetRequest untested() {
        return tested < count ? requests[slot(head, tested)] : null;
    }

    ChunkPlan untestedPlan() {
        return plans[slot(head, tested)];
    }

    long untestedDestination() {
        return destinations[slot(head, tested)];
    }

    MemoryKind untestedKind() {
        return kinds[slot(head, tested)];
    }

    /** Marks the oldest untested request complete; {@code awaitsUnpack} if its data must be unpacked first. */
    void markTested(boolean awaitsUnpack) {
        tickets[slot(head, tested)] = awaitsUnpack ? UNSUBMITTED : 0;
        tested++;
    }

    /** Gives every completed receive waiting for a batch the batch's ticket. */
    void assignTicket(long ticket) {
        for (int i = 0; i < tested; i++) {
            int s = slot(head, i);
            if (tickets[s] == UNSUBMITTED) {
                tickets[s] = ticket;
            }
        }
    }

    /** Whether the oldest request tested complete (and may be retired once its ticket is done). */
    boolean hasTested() {
        return tested > 0;
    }

    /** The unpack ticket of the oldest request (0: nothing to wait for). */
    long headTicket() {
        return tickets[head];
    }

    NetRequest headRequest() {
        return requests[head];
    }

    /**
     * Removes the oldest request, which just tested complete and waits for nothing (a send), and
     * returns its plan. Only while no earlier request waits to be retired.
     */
    ChunkPlan retireUntested() {
        ChunkPlan plan = plans[head];
        plans[head] = null;
        requests[head] = null;
        head = slot(head, 1);
        count--;
        return plan;
    }

    /** Removes the oldest request, which must have tested complete, and returns its plan. */
    ChunkPlan retire() {
        ChunkPlan plan = plans[head];
        plans[head] = null;
        requests[head] = null;
        head = slot(head, 1);
        count--;
        tested--;
        return plan;
    }
}
