package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.registration.RegistrationGroup;

/**
 * The requests one comm has posted, oldest first: {@code [head, head+tested)} have tested complete and
 * wait to be retired (a receive waits for its unpack, then is consumed), {@code [head+tested,
 * head+count)} are still in flight. The transport lets only the oldest untested request be tested and
 * only the oldest completed one be consumed, which a ring expresses directly. Slots are preallocated, so
 * posting a chunk allocates nothing; each is one object holding everything about its request, so
 * testing, unpacking and retiring a request reads one slot instead of one array per attribute.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent, except {@link #count()} (a racy read for stats).
 */
final class RequestRing {

    static final int SIZE = NetTransport.MAX_REQUESTS;
    /** Ticket of a completed receive whose unpack batch has not been submitted yet. */
    private static final long UNSUBMITTED = -1;

    /** One posted request: its plan and transport request, and for a receive where it lands and its unpack. */
    private static final class Slot {
        ChunkPlan plan;
        NetRequest request;
        long destination;
        MemoryKind kind;
        long ticket;
        /** Staging buffer of a packed chunk, or -1. */
        int staged;
        /** Descriptors [first, end) of a packed receive, scattered out of its staging buffer. */
        int first;
        int end;
    }

    private final Slot[] slots = new Slot[SIZE];
    private int head;
    private int count;
    private int tested;
    // the registration this ring's comm posted with last, valid while its group's generation is unchanged
    private RegistrationGroup lastGroup;
    private int lastGeneration;
    private MemoryRegistration lastRegistration;

    RequestRing() {
        for (int i = 0; i < SIZE; i++) {
            slots[i] = new Slot();
        }
    }

    private static int slot(int head, int i) {
        return (head + i) & (SIZE - 1);
    }

    /** Requests held on the transport. */
    int count() {
        return count;
    }

    /**
     * The registration of {@code group} on this ring's comm if the last post used it and the group has
     * dropped no registration since, else null. Consecutive chunks nearly always come from one group,
     * so this spares the group's map lookup per chunk.
     */
    MemoryRegistration lastRegistration(RegistrationGroup group) {
        return group == lastGroup && group.generation() == lastGeneration ? lastRegistration : null;
    }

    /** Remembers {@code registration} (of {@code group} on this ring's comm) for {@link #lastRegistration}. */
    void rememberRegistration(RegistrationGroup group, MemoryRegistration registration) {
        lastGroup = group;
        lastGeneration = group.generation();
        lastRegistration = registration;
    }

    /** Records a posted send, from staging buffer {@code staged} (-1: none). */
    void add(ChunkPlan plan, NetRequest request, int staged) {
        Slot s = slots[slot(head, count)];
        s.plan = plan;
        s.request = request;
        s.staged = staged;
        count++;
    }

    /**
     * Records a posted receive into {@code destination} (memory of {@code kind}); if {@code staged} is not
     * -1, that is a staging buffer holding descriptors {@code [first, end)} of the plan back to back.
     */
    void add(ChunkPlan plan, NetRequest request, long destination, MemoryKind kind, int staged, int first, int end) {
        Slot s = slots[slot(head, count)];
        s.plan = plan;
        s.request = request;
        s.destination = destination;
        s.kind = kind;
        s.ticket = 0;
        s.staged = staged;
        s.first = first;
        s.end = end;
        count++;
    }

    /** The oldest request still in flight, or null if every posted one has tested complete. */
    NetRequest untested() {
        return tested < count ? slots[slot(head, tested)].request : null;
    }

    ChunkPlan untestedPlan() {
        return slots[slot(head, tested)].plan;
    }

    long untestedDestination() {
        return slots[slot(head, tested)].destination;
    }

    MemoryKind untestedKind() {
        return slots[slot(head, tested)].kind;
    }

    /** Staging buffer of the oldest untested request, or -1. */
    int untestedStaged() {
        return slots[slot(head, tested)].staged;
    }

    int untestedRunFirst() {
        return slots[slot(head, tested)].first;
    }

    int untestedRunEnd() {
        return slots[slot(head, tested)].end;
    }

    /** The oldest untested request's packed run is being scattered by the unpacker: nothing left for consume. */
    void markScattered() {
        Slot s = slots[slot(head, tested)];
        s.end = s.first;
    }

    /** Marks the oldest untested request complete; {@code awaitsUnpack} if its data must be unpacked first. */
    void markTested(boolean awaitsUnpack) {
        slots[slot(head, tested)].ticket = awaitsUnpack ? UNSUBMITTED : 0;
        tested++;
    }

    /** Gives every completed receive waiting for a batch the batch's ticket. */
    void assignTicket(long ticket) {
        for (int i = 0; i < tested; i++) {
            Slot s = slots[slot(head, i)];
            if (s.ticket == UNSUBMITTED) {
                s.ticket = ticket;
            }
        }
    }

    /** Whether the oldest request tested complete (and may be retired once its ticket is done). */
    boolean hasTested() {
        return tested > 0;
    }

    /** The unpack ticket of the oldest request (0: nothing to wait for). */
    long headTicket() {
        return slots[head].ticket;
    }

    NetRequest headRequest() {
        return slots[head].request;
    }

    ChunkPlan headPlan() {
        return slots[head].plan;
    }

    /** The staging buffer of the oldest request, or -1. */
    int headStaged() {
        return slots[head].staged;
    }

    /** Where the oldest request landed (its staging buffer's address if it has one). */
    long headDestination() {
        return slots[head].destination;
    }

    /** First descriptor of the oldest request's packed run. */
    int headRunFirst() {
        return slots[head].first;
    }

    /** End (exclusive) of the oldest request's packed run. */
    int headRunEnd() {
        return slots[head].end;
    }

    /**
     * Removes the oldest request, which just tested complete and waits for nothing (a send), and
     * returns its plan. Only while no earlier request waits to be retired.
     */
    ChunkPlan retireUntested() {
        Slot s = slots[head];
        ChunkPlan plan = s.plan;
        s.plan = null;
        s.request = null;
        head = slot(head, 1);
        count--;
        return plan;
    }

    /** Removes the oldest request, which must have tested complete, and returns its plan. */
    ChunkPlan retire() {
        tested--;
        return retireUntested();
    }
}
