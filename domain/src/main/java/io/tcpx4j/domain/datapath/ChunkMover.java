package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.registration.RegionRegistry;
import io.tcpx4j.domain.registration.RegistrationGroup;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * The chunks of both directions of a connection on the transport: each direction is a {@link Direction}
 * of announced plans; their chunks are posted in order within the windows (chunk k on channel k mod
 * C), tested oldest first, and receives are unpacked in one batch per pass and consumed in order. A
 * packed chunk (see {@link ChunkPlan}) is gathered into a staging buffer of its direction before its send is
 * posted (host memory by the CPU at once; device memory by the unpacker, one batch for as many chunks
 * in a row as there are buffers, the sends posted once it finished) and received into one: the
 * unpacker scatters its fragments straight into the descriptors (or, when it landed in place, copies
 * them out of the buffer: the CPU just before it is consumed for host memory, the unpacker for device
 * memory). Unless its descriptors lie back to back on that side, which then sends or receives them in
 * place.
 * Sends and receives share one {@link RequestRing} type and one posting loop.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent, except {@link #outstandingRequests()}.
 */
public final class ChunkMover {

    /** Told when the last chunk of a plan completed (a send tested done, a receive consumed). */
    public interface Completions {
        void sent(SendPlan op);

        void received(ReceivePlan op);
    }

    private final NetTransport transport;
    private final ScatterGather unpacker;
    private final RegionRegistry registry;
    private final DataChannels channels;
    private final Direction out;
    private final Direction in;
    private final Set<RegistrationGroup> registered = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The registry's retirement count when this pipeline last dropped its registrations of retired groups. */
    private long retirementsSeen;
    /**
     * Chunks taken from a plan and not retired yet: gathered and waiting to be posted, or on the transport
     * (what the rings hold). Counted here so that a pass with nothing queued and nothing out reads no ring.
     */
    private int chunksOut;

    public ChunkMover(NetTransport transport, ScatterGather unpacker, RegionRegistry registry, DataChannels channels,
                         EngineConfig cfg) {
        this.transport = transport;
        this.unpacker = unpacker;
        this.registry = registry;
        this.channels = channels;
        this.out = new Direction(true, cfg.sendWindow(), registry.memory());
        this.in = new Direction(false, cfg.recvWindow(), registry.memory());
    }

    /** Queues the chunks of an announced send. */
    void send(SendPlan op) {
        out.queue.add(op);
    }

    /** Queues the chunks of an announced receive. */
    void receive(ReceivePlan op) {
        in.queue.add(op);
    }

    /**
     * One pass over the transport: completions first (the last chunk of a plan reported to
     * {@code completions}), so that freed slots are posted again at once. Registrations of groups retired
     * since the last pass are dropped first, whether or not anything moves; with nothing queued and nothing
     * on the transport that is all a pass does.
     */
    public int progress(Completions completions) {
        // a group is registered only on posting, so an empty set has nothing to drop
        if (!registered.isEmpty() && registry.retirements() != retirementsSeen) {
            retirementsSeen = registry.retirements();
            channels.dropRetired(registered);
        }
        if (quiet() || !channels.isReady()) {
            return 0;
        }
        int work = testSends(completions);
        work += testReceives();
        work += consumeReceives(completions);
        work += post(in);
        work += post(out);
        return work;
    }

    /** Posts the direction's next chunks while windows, staging buffers and the transport allow. */
    private int post(Direction direction) {
        int work = 0;
        while (true) {
            if (!direction.gathered.isEmpty()) {
                // gathered chunks go first, in order, once their copies finished
                long ticket = direction.gathered.headTicket();
                if (ticket != 0 && !unpacker.isDone(ticket)) {
                    break;
                }
                DataChannel ch = channels.get(direction.channel);
                RequestRing ring = direction.ring(ch);
                if (ring.count() >= direction.window) {
                    break;
                }
                int staged = direction.gathered.headStaged();
                NetRequest req = transport.isend(ch.send(), direction.address(staged), direction.gathered.headLength(),
                        (int) direction.seq, registration(ring, direction.region(staged).group, ch.send()));
                if (req == null) {
                    break;
                }
                ring.add(direction.gathered.headPlan(), req, staged); // counted in chunksOut when gathered
                direction.gathered.poll();
                direction.advance(channels.size());
                work++;
                continue;
            }
            ChunkPlan op = direction.queue.peek();
            if (op == null) {
                break;
            }
            if (!op.hasNext()) {
                direction.queue.poll();
                continue;
            }
            DataChannel ch = channels.get(direction.channel);
            RequestRing ring = direction.ring(ch);
            if (ring.count() >= direction.window) {
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
                LocalRegion first = op.regions[op.nextDesc()];
                MemoryKind kind = first.range.kind();
                if (direction.sends && kind != MemoryKind.DRAM) {
                    int gathered = gatherOnDevice(direction, op);
                    if (gathered == 0) {
                        break;
                    }
                    work += gathered;
                    continue;
                }
                staged = direction.take(kind, first.range.device());
                if (staged < 0) {
                    break;
                }
                region = direction.region(staged);
                address = direction.address(staged);
                if (direction.sends) {
                    NativeMemory.gather(op.addresses, op.lengths, op.nextDesc(), op.nextRunEnd(), address);
                }
            } else {
                region = op.regions[op.nextDesc()];
                address = op.nextAddress();
            }
            NetRequest req;
            if (direction.sends) {
                req = transport.isend(ch.send(), address, len, (int) direction.seq, registration(ring, region.group, ch.send()));
            } else {
                req = transport.irecv(ch.recv(), address, len, (int) direction.seq, registration(ring, region.group, ch.recv()));
            }
            if (req == null) {
                if (staged >= 0) {
                    direction.give(staged);
                }
                break;
            }
            if (direction.sends) {
                ring.add(op, req, staged);
            } else if (staged >= 0) {
                ring.add(op, req, address, region.range.kind(), staged, op.nextDesc(), op.nextRunEnd());
            } else {
                ring.add(op, req, address, region.range.kind(), -1, 0, 0);
            }
            chunksOut++;
            op.advance();
            direction.advance(channels.size());
            work++;
        }
        return work;
    }

    /**
     * Queues the gather of the plan's next packed chunks of device memory (as many in a row as there are
     * staging buffers) into one unpacker batch; they are posted once it finished. Returns how many.
     */
    private int gatherOnDevice(Direction direction, ChunkPlan op) {
        int n = 0;
        while (op.hasNext() && op.nextPacked() && !direction.gathered.isFull() && !contiguous(op)) {
            LocalRegion first = op.regions[op.nextDesc()];
            MemoryKind kind = first.range.kind();
            if (kind == MemoryKind.DRAM) {
                break;
            }
            int staged = direction.take(kind, first.range.device());
            if (staged < 0) {
                break;
            }
            long to = direction.address(staged);
            for (int i = op.nextDesc(), end = op.nextRunEnd(); i < end; i++) {
                long len = op.lengths[i];
                unpacker.copy(op.addresses[i], to, len, kind);
                to += len;
            }
            direction.gathered.add(op, staged, op.nextLength());
            chunksOut++;
            op.advance();
            n++;
        }
        if (n > 0) {
            direction.gathered.assignTicket(n, unpacker.submit());
        }
        return n;
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

    private int testSends(Completions completions) {
        int work = 0;
        for (int i = 0; i < channels.size(); i++) {
            DataChannel ch = channels.get(i);
            NetRequest req;
            while ((req = ch.tx.untested()) != null && transport.test(req)) {
                int staged = ch.tx.headStaged();
                if (staged >= 0) {
                    out.give(staged);
                }
                SendPlan op = (SendPlan) ch.tx.retireUntested();
                chunksOut--;
                work++;
                if (op.chunkCompleted()) {
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
            DataChannel ch = channels.get(i);
            NetRequest req;
            while ((req = ch.rx.untested()) != null && transport.test(req)) {
                boolean unpack;
                if (ch.rx.untestedPlan().discards()) {
                    unpack = false;
                } else if (ch.rx.untestedStaged() >= 0) {
                    unpack = scatterPacked(ch.rx, req);
                } else {
                    unpack = req.fragmentCount() > 0;
                    if (unpack) {
                        unpacker.add(req, ch.rx.untestedDestination(), ch.rx.untestedKind());
                    }
                }
                added |= unpack;
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

    /**
     * Queues the scatter of a packed receive that completed: straight from its bounce pages into the
     * descriptors when it has fragments; out of its device staging buffer when it landed there. Returns
     * whether the unpacker got work; false leaves it to the CPU at consume (a host buffer it landed in).
     */
    private boolean scatterPacked(RequestRing rx, NetRequest req) {
        ChunkPlan plan = rx.untestedPlan();
        int first = rx.untestedRunFirst();
        int end = rx.untestedRunEnd();
        MemoryKind kind = rx.untestedKind();
        if (req.fragmentCount() > 0) {
            unpacker.add(req, plan.addresses, plan.lengths, first, end, kind);
        } else if (kind != MemoryKind.DRAM) {
            long from = rx.untestedDestination();
            for (int i = first; i < end; i++) {
                unpacker.copy(from, plan.addresses[i], plan.lengths[i], kind);
                from += plan.lengths[i];
            }
        } else {
            return false;
        }
        rx.markScattered();
        return true;
    }

    private int consumeReceives(Completions completions) {
        int work = 0;
        for (int i = 0; i < channels.size(); i++) {
            DataChannel ch = channels.get(i);
            while (ch.rx.hasTested()) {
                long ticket = ch.rx.headTicket();
                if (ticket != 0 && !unpacker.isDone(ticket)) {
                    break;
                }
                transport.consumed(ch.recv(), ch.rx.headRequest());
                int staged = ch.rx.headStaged();
                if (staged >= 0) {
                    // a host buffer it landed in; runs scattered by the unpacker have an empty run left here
                    ChunkPlan plan = ch.rx.headPlan();
                    NativeMemory.scatter(ch.rx.headDestination(), plan.addresses, plan.lengths, ch.rx.headRunFirst(),
                            ch.rx.headRunEnd());
                    in.give(staged);
                }
                ReceivePlan op = (ReceivePlan) ch.rx.retire();
                chunksOut--;
                work++;
                if (op.chunkCompleted()) {
                    completions.received(op);
                }
            }
        }
        return work;
    }

    /** Whether nothing is on the transport or waiting to be posted. */
    public boolean quiet() {
        return out.queue.isEmpty() && in.queue.isEmpty() && chunksOut == 0;
    }

    /**
     * Whether no chunk of the sending direction waits to be posted or gathered; requests on the transport,
     * finished or not, do not count (a READ target's next request would always find its last one's).
     */
    boolean sendsIdle() {
        return out.queue.isEmpty() && out.gathered.isEmpty();
    }

    /** Drops what is queued, the registrations made on the comms, and closes the comms. */
    void close() {
        out.queue.clear();
        in.queue.clear();
        channels.close(registered);
        registered.clear();
        out.release();
        in.release();
    }
}
