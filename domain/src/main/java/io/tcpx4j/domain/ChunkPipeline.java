package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.Unpacker;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * The chunks of both directions of a connection on the transport: each direction is a {@link Lane}
 * of announced plans; their chunks are posted in order within the windows (chunk k on channel k mod
 * C), tested oldest first, and receives are unpacked in one batch per pass and consumed in order. A
 * packed chunk (see {@link ChunkPlan}) is gathered into a staging buffer of its lane before its send is
 * posted, and scattered out of one once its receive is unpacked, just before it is consumed; unless its
 * descriptors lie back to back on that side, which then sends or receives them in place.
 * Sends and receives share one {@link RequestRing} type and one posting loop.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent, except {@link #outstandingRequests()}.
 */
final class ChunkPipeline {

    /** Told when the last chunk of a plan completed (a send tested done, a receive consumed). */
    interface Completions {
        void sent(OutOp op);

        void received(InOp op);
    }

    private final NetTransport transport;
    private final Unpacker unpacker;
    private final RegionRegistry registry;
    private final ChannelGroup channels;
    private final Completions completions;
    private final Lane out;
    private final Lane in;
    private final Set<RegistrationGroup> registered = Collections.newSetFromMap(new IdentityHashMap<>());

    ChunkPipeline(NetTransport transport, Unpacker unpacker, RegionRegistry registry, ChannelGroup channels,
                  EngineConfig cfg, Completions completions) {
        this.transport = transport;
        this.unpacker = unpacker;
        this.registry = registry;
        this.channels = channels;
        this.completions = completions;
        this.out = new Lane(true, cfg.sendWindow(), new StagingPool());
        this.in = new Lane(false, cfg.recvWindow(), new StagingPool());
    }

    /** Queues the chunks of an announced send. */
    void send(OutOp op) {
        out.queue.add(op);
    }

    /** Queues the chunks of an announced receive. */
    void receive(InOp op) {
        in.queue.add(op);
    }

    /** One pass over the transport: completions first, so that freed slots are posted again at once. */
    int progress() {
        if (!channels.isReady()) {
            return 0;
        }
        int work = testSends();
        work += testReceives();
        work += consumeReceives();
        work += post(in);
        work += post(out);
        return work;
    }

    /** Posts the lane's next chunks while windows, staging buffers and the transport allow. */
    private int post(Lane lane) {
        int work = 0;
        while (!lane.queue.isEmpty()) {
            ChunkPlan op = lane.queue.peek();
            if (!op.hasNext()) {
                lane.queue.poll();
                continue;
            }
            Channel ch = channels.get(lane.channel);
            RequestRing ring = lane.ring(ch);
            if (ring.count() >= lane.window) {
                break;
            }
            int len = op.nextLength();
            LocalRegion region;
            long address;
            int staged = -1;
            if (op.discards()) {
                region = registry.discardRegion();
                address = region.range.address();
            } else if (op.nextPacked() && !contiguous(op)) {
                staged = lane.staging.take();
                if (staged < 0) {
                    break;
                }
                region = lane.staging.region();
                address = lane.staging.address(staged);
                if (lane.sends) {
                    gather(op, address);
                }
            } else {
                region = op.regions[op.nextDesc()];
                address = op.nextAddress();
            }
            NetRequest req;
            if (lane.sends) {
                req = transport.isend(ch.send, address, len, (int) lane.seq, registration(ring, region.group, ch.send));
            } else {
                req = transport.irecv(ch.recv, address, len, (int) lane.seq, registration(ring, region.group, ch.recv));
            }
            if (req == null) {
                if (staged >= 0) {
                    lane.staging.give(staged);
                }
                break;
            }
            if (lane.sends) {
                ring.add(op, req, staged);
            } else if (staged >= 0) {
                ring.add(op, req, address, MemoryKind.DRAM, staged, op.nextDesc(), op.nextRunEnd());
            } else {
                ring.add(op, req, address, region.range.kind(), -1, 0, 0);
            }
            op.advance();
            lane.seq++;
            if (++lane.channel == channels.size()) {
                lane.channel = 0;
            }
            work++;
        }
        return work;
    }

    /**
     * Whether the next (packed) chunk's descriptors lie back to back in one region here, so that the
     * chunk can be sent from or received into them directly, without a staging copy. A local choice:
     * the chunk on the wire is the same either way.
     */
    private static boolean contiguous(ChunkPlan op) {
        int first = op.nextDesc();
        LocalRegion region = op.regions[first];
        long next = op.addresses[first] + op.lengths[first];
        for (int i = first + 1, end = op.nextRunEnd(); i < end; i++) {
            long len = op.lengths[i];
            if (len == 0) {
                continue;
            }
            if (op.addresses[i] != next || op.regions[i] != region) {
                return false;
            }
            next += len;
        }
        return true;
    }

    /** Copies the next (packed) chunk's descriptors of {@code op}, host memory, back to back to {@code to}. */
    private static void gather(ChunkPlan op, long to) {
        for (int i = op.nextDesc(), end = op.nextRunEnd(); i < end; i++) {
            long len = op.lengths[i];
            NativeMemory.copy(op.addresses[i], to, len);
            to += len;
        }
    }

    /** Copies a packed chunk received at {@code from} out to descriptors {@code [first, end)} of {@code op}. */
    private static void scatter(ChunkPlan op, long from, int first, int end) {
        for (int i = first; i < end; i++) {
            long len = op.lengths[i];
            NativeMemory.copy(from, op.addresses[i], len);
            from += len;
        }
    }

    /** The group's registration on {@code comm} (whose ring is {@code ring}), registering it there on first use. */
    private MemoryRegistration registration(RequestRing ring, RegistrationGroup group, Comm comm) {
        MemoryRegistration mr = ring.lastRegistration(group);
        if (mr != null) {
            return mr;
        }
        mr = group.on(comm);
        if (mr == null) {
            mr = group.register(transport, comm);
            registered.add(group);
        }
        ring.rememberRegistration(group, mr);
        return mr;
    }

    private int testSends() {
        int work = 0;
        for (int i = 0; i < channels.size(); i++) {
            Channel ch = channels.get(i);
            NetRequest req;
            while ((req = ch.tx.untested()) != null && transport.test(req)) {
                int staged = ch.tx.headStaged();
                if (staged >= 0) {
                    out.staging.give(staged);
                }
                OutOp op = (OutOp) ch.tx.retireUntested();
                op.completed++;
                work++;
                if (op.allCompleted()) {
                    completions.sent(op);
                }
            }
        }
        return work;
    }

    private int testReceives() {
        int work = 0;
        boolean added = false;
        for (int i = 0; i < channels.size(); i++) {
            Channel ch = channels.get(i);
            NetRequest req;
            while ((req = ch.rx.untested()) != null && transport.test(req)) {
                boolean unpack = !ch.rx.untestedPlan().discards() && req.fragmentCount() > 0;
                if (unpack) {
                    unpacker.add(req, ch.rx.untestedDestination(), ch.rx.untestedKind());
                    added = true;
                }
                ch.rx.markTested(unpack);
                work++;
            }
        }
        if (added) {
            // one batch (one kernel launch on a GPU) for everything that completed in this pass
            long ticket = unpacker.submit();
            for (int i = 0; i < channels.size(); i++) {
                channels.get(i).rx.assignTicket(ticket);
            }
        }
        return work;
    }

    private int consumeReceives() {
        int work = 0;
        for (int i = 0; i < channels.size(); i++) {
            Channel ch = channels.get(i);
            while (ch.rx.hasTested()) {
                long ticket = ch.rx.headTicket();
                if (ticket != 0 && !unpacker.isDone(ticket)) {
                    break;
                }
                transport.consumed(ch.recv, ch.rx.headRequest());
                int staged = ch.rx.headStaged();
                if (staged >= 0) {
                    scatter(ch.rx.headPlan(), ch.rx.headDestination(), ch.rx.headRunFirst(), ch.rx.headRunEnd());
                    in.staging.give(staged);
                }
                InOp op = (InOp) ch.rx.retire();
                op.completed++;
                work++;
                if (op.allCompleted()) {
                    completions.received(op);
                }
            }
        }
        return work;
    }

    /** Whether nothing is on the transport or waiting to be posted. */
    boolean quiet() {
        return out.queue.isEmpty() && in.queue.isEmpty() && channels.outstandingRequests() == 0;
    }

    /** Requests held on the transport right now; a racy read from any thread (for stats and leak checks). */
    int outstandingRequests() {
        return channels.outstandingRequests();
    }

    /** Drops what is queued, the registrations made on the comms, and closes the comms. */
    void close() {
        out.queue.clear();
        in.queue.clear();
        channels.close(registered);
        registered.clear();
        out.staging.release();
        in.staging.release();
    }
}
