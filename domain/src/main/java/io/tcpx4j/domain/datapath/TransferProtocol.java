package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.log.RateLimitedLog;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameWriter;
import io.tcpx4j.domain.protocol.RefusalCode;
import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.registration.RegionRegistry;
import io.tcpx4j.domain.transfer.Packing;
import io.tcpx4j.domain.transfer.Post;
import io.tcpx4j.domain.transfer.PostedTransfer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The transfer protocol of an established connection: the frames that announce, acknowledge and
 * refuse transfers in both directions, the state of every transfer announced on it, and what happens
 * when its last chunk completed. It owns that state; {@link ChunkMover} moves the chunks over the
 * connection's {@link DataChannels}.
 *
 * <p>For each direction the data sender is the only ordering authority: it writes a WRITE or
 * READ_DATA frame announcing a chunk sequence, then posts the sends; chunk k of the direction's
 * stream travels on channel k mod C. The receiver posts receives in exactly the announced order.
 * Protocol violations by the peer are thrown as {@link TransferException}s with REMOTE_DISCONNECT.
 *
 * <p>A WRITE (or READ_DATA) announces a {@link Packing} with its chunk size ({@link ChunkPlan}); each side
 * gathers or scatters packed chunks in memory of one kind its unpacker reaches, through staging buffers
 * of that kind. A WRITE's initiator takes the smaller of what its memory and the target's published kind
 * allow; a READ offers what the initiator's memory allows and the target answers with at most that and
 * what its own allows. A target refuses packed chunks it cannot scatter (mixed kinds, memory its unpacker
 * does not reach, chunks beyond its staging buffers) with NOT_SUPPORTED and drains them.
 *
 * <p>A post the session marked inline (host memory on both sides, at most
 * {@link EngineConfig#inlineLimit()} bytes) carries its bytes in the control frame instead: a WRITE is
 * WRITE_INLINE then WRITE_ACK (chunked instead above the target's inline limit, which its handshake
 * announced), a READ is READ_INLINE then READ_REPLY (or the chunked answer, if the target's limit or
 * memory does not allow inline). One round trip, no data channel, same bounds checks
 * and the same notification rule. Transfers are not ordered among each other (as in NIXL): an inline
 * WRITE may land before an earlier chunked one to the same peer.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
public final class TransferProtocol implements ChunkMover.Completions {

    private static final System.Logger LOG = System.getLogger(TransferProtocol.class.getName());
    /** Refusals are the peer's doing: rate-limited, so that a hostile peer cannot flood the log. */
    private static final RateLimitedLog REFUSALS = new RateLimitedLog(LOG);

    private final String engineName;
    private final String peerName;
    private final EngineConfig cfg;
    /** The configuration's chunk size and inline limit, read per transfer. */
    private final int chunkSize;
    private final int inlineLimit;
    private final RegionRegistry registry;
    private final FrameWriter writer;
    private final Consumer<byte[]> deliver;
    private final PeerTraffic traffic;

    private final DataChannels channels;
    private final ChunkMover pipeline;
    private final ScatterGather unpacker;
    /** Chunked WRITEs this side sends, until every chunk was sent and the WRITE_ACK came. */
    private final Map<Long, SendPlan> awaitingAck = new HashMap<>();
    /** Inline WRITEs (their bytes left with the frame), until the WRITE_ACK comes. */
    private final Map<Long, Post> awaitingInlineAck = new HashMap<>();
    private final Map<Long, Post> awaitingData = new HashMap<>();
    private final Set<ChunkPlan> live = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Largest WRITE sent inline: the lower of both sides' limits (a target many peers write into lowers its own). */
    private final int writeInlineLimit;

    /**
     * {@code deliver} takes the notifications that arrive; {@code traffic} counts what the peer does in this
     * engine's memory; {@code pipeline} moves the chunks over {@code channels}; {@code peerInlineLimit}: as the
     * peer's handshake said.
     */
    public TransferProtocol(String engineName, String peerName, EngineConfig cfg, ScatterGather unpacker, RegionRegistry registry,
                    FrameWriter writer, Consumer<byte[]> deliver, PeerTraffic traffic, DataChannels channels,
                    ChunkMover pipeline, int peerInlineLimit) {
        this.engineName = engineName;
        this.traffic = traffic;
        this.writeInlineLimit = Math.min(cfg.inlineLimit(), peerInlineLimit);
        this.peerName = peerName;
        this.cfg = cfg;
        this.chunkSize = cfg.chunkSize();
        this.inlineLimit = cfg.inlineLimit();
        this.registry = registry;
        this.writer = writer;
        this.deliver = deliver;
        this.channels = channels;
        this.unpacker = unpacker;
        this.pipeline = pipeline;
    }

    /** Takes a frame of the data protocol; false if {@code f} is not one. */
    public boolean onFrame(ControlFrame f) {
        if (f instanceof ControlFrame.Handles h) {
            channels.peerHandles(h.handles());
        } else if (f instanceof ControlFrame.Write w) {
            onWrite(w);
        } else if (f instanceof ControlFrame.WriteInline w) {
            onWriteInline(w);
        } else if (f instanceof ControlFrame.WriteAck a) {
            onWriteAck(a);
        } else if (f instanceof ControlFrame.Read r) {
            onRead(r.xfer(), new Packing(r.pack(), r.packedChunk()), r.addresses(), r.lengths(), false);
        } else if (f instanceof ControlFrame.ReadInline r) {
            onRead(r.xfer(), new Packing(r.pack(), r.packedChunk()), r.addresses(), r.lengths(), true);
        } else if (f instanceof ControlFrame.ReadReply r) {
            onReadReply(r);
        } else if (f instanceof ControlFrame.ReadData d) {
            onReadData(d);
        } else if (f instanceof ControlFrame.ReadNack n) {
            onReadNack(n);
        } else {
            return false;
        }
        return true;
    }

    // ------------------------------------------------------------------ announcements

    /** Announces and queues a validated post. */
    public void start(Post p) {
        int n = p.lengths().length;
        if (p.inline() && (!p.write() || p.xfer().bytes <= writeInlineLimit)) {
            startInline(p, n);
        } else if (p.write()) {
            SendPlan op = new SendPlan(p.xfer(), p.xfer().id, p.localAddresses(), p.lengths(), p.regions(),
                    sendChunk(p.lengths(), p.packing()), p.packing());
            writer.write(op.xferId, op.chunkSize, op.pack, op.packedChunk, p.notification(), p.remoteAddresses(),
                    p.lengths(), n);
            awaitingAck.put(op.xferId, op);
            live.add(op);
            if (op.chunks > 0) {
                pipeline.send(op);
            }
        } else {
            writer.read(p.xfer().id, p.packing().limit(), p.packing().chunk(), p.remoteAddresses(), p.lengths(), n);
            awaitingData.put(p.xfer().id, p);
        }
    }

    private void startInline(Post p, int n) {
        if (p.write()) {
            writer.writeInline(p.xfer().id, p.notification(), p.remoteAddresses(), p.lengths(), n,
                    p.localAddresses(), (int) p.xfer().bytes);
            awaitingInlineAck.put(p.xfer().id, p);
        } else {
            writer.readInline(p.xfer().id, p.packing().limit(), p.packing().chunk(), p.remoteAddresses(), p.lengths(),
                    n);
            awaitingData.put(p.xfer().id, p);
        }
    }

    private void onWrite(ControlFrame.Write w) {
        Packing packing = Packing.announced(w.chunkSize(), new Packing(w.pack(), w.packedChunk()), null);
        LocalRegion[] regions = new LocalRegion[w.lengths().length];
        RefusalCode refusal = registry.admitRemoteAccess(w.addresses(), w.lengths(), regions);
        if (refusal == RefusalCode.NONE && packing.packs() && (!packs(regions)
                || packing.chunk() > Packing.maxChunk(LocalRegion.oneKind(regions)))) {
            // the sender packs only into memory of one kind (as it was shown), in chunks that kind allows;
            // this side must reach that memory and hold such chunks in its staging buffers
            LocalRegion.releaseAll(regions);
            refusal = RefusalCode.NOT_SUPPORTED;
        }
        ReceivePlan op = new ReceivePlan(null, w.xfer(), w.addresses(), w.lengths(), refusal == RefusalCode.NONE ? regions : null,
                w.chunkSize(), packing, w.notification(), refusal);
        if (refusal != RefusalCode.NONE) {
            traffic.refused(true, refusal);
            REFUSALS.log(System.Logger.Level.WARNING, "{0}: refused WRITE {1} from {2} ({3}); draining its data",
                    engineName, w.xfer(), peerName, refusal);
        }
        receive(op);
    }

    private void onWriteAck(ControlFrame.WriteAck a) {
        Post inline = awaitingInlineAck.remove(a.xfer());
        if (inline != null) {
            inline.releaseRegions();
            endWrite(inline.xfer(), RefusalCode.ofWire(a.status()));
            return;
        }
        SendPlan op = awaitingAck.get(a.xfer());
        if (op == null || !op.ack(RefusalCode.ofWire(a.status()))) {
            throw disconnect("WRITE_ACK for unknown transfer " + a.xfer());
        }
        maybeFinishWrite(op);
    }

    private void onWriteInline(ControlFrame.WriteInline w) {
        LocalRegion[] regions = new LocalRegion[w.lengths().length];
        RefusalCode refusal = registry.admitRemoteAccess(w.addresses(), w.lengths(), regions);
        if (refusal == RefusalCode.NONE && !LocalRegion.allHost(regions)) {
            LocalRegion.releaseAll(regions);
            refusal = RefusalCode.NOT_SUPPORTED;
        }
        if (refusal != RefusalCode.NONE) {
            traffic.refused(true, refusal);
            REFUSALS.log(System.Logger.Level.WARNING, "{0}: refused WRITE {1} from {2} ({3})",
                    engineName, w.xfer(), peerName, refusal);
        } else {
            long bytes = w.data().remaining(); // as many as its ranges hold: checked when the frame was read
            scatter(w.data(), w.addresses(), w.lengths());
            LocalRegion.releaseAll(regions);
            traffic.wrote(bytes);
            if (w.notification() != null) {
                deliver.accept(w.notification());
            }
        }
        writer.writeAck(w.xfer(), refusal);
    }

    /** {@code accepted}: the most packing the initiator takes. */
    private void onRead(long xfer, Packing accepted, long[] addresses, long[] lengths, boolean inlineOk) {
        LocalRegion[] regions = new LocalRegion[lengths.length];
        RefusalCode refusal = registry.admitRemoteAccess(addresses, lengths, regions);
        if (refusal != RefusalCode.NONE) {
            traffic.refused(false, refusal);
            REFUSALS.log(System.Logger.Level.WARNING, "{0}: refused READ {1} from {2} ({3})",
                    engineName, xfer, peerName, refusal);
            writer.readNack(xfer, refusal);
            return;
        }
        long total = ChunkPlan.total(lengths);
        if (inlineOk && total <= inlineLimit && LocalRegion.allHost(regions)) {
            writer.readReply(xfer, addresses, lengths, lengths.length, (int) total);
            LocalRegion.releaseAll(regions);
            traffic.served(total);
            return;
        }
        Packing packing = packs(regions) ? Packing.of(LocalRegion.oneKind(regions), cfg).min(accepted) : Packing.NONE;
        SendPlan op = new SendPlan(null, xfer, addresses, lengths, regions, sendChunk(lengths, packing), packing);
        writer.readData(xfer, op.chunkSize, op.pack, op.packedChunk);
        if (op.chunks == 0) {
            op.releaseRegions();
            traffic.served(op.bytes);
        } else {
            live.add(op);
            pipeline.send(op);
        }
    }

    /**
     * The chunk size to announce for data this side sends: equal chunks over the channels
     * ({@link ChunkPlan#spreadChunk}) while no chunk of this connection waits to be posted; behind others
     * the channels are busy anyway and smaller chunks only add per-chunk work.
     */
    private int sendChunk(long[] lengths, Packing packing) {
        return pipeline.sendsIdle() ? ChunkPlan.spreadChunk(lengths, chunkSize, packing, channels.size())
                : chunkSize;
    }

    private void onReadData(ControlFrame.ReadData d) {
        Post p = awaitingData.remove(d.xfer());
        if (p == null) {
            throw disconnect("READ_DATA for unknown transfer " + d.xfer());
        }
        Packing packing = Packing.announced(d.chunkSize(), new Packing(d.pack(), d.packedChunk()), p.packing());
        receive(new ReceivePlan(p.xfer(), d.xfer(), p.localAddresses(), p.lengths(), p.regions(), d.chunkSize(), packing,
                p.notification(), RefusalCode.NONE));
    }

    private void onReadReply(ControlFrame.ReadReply r) {
        Post p = awaitingData.remove(r.xfer());
        if (p == null || !p.inline()) {
            throw disconnect("READ_REPLY for unknown transfer " + r.xfer());
        }
        if (r.data().remaining() != p.xfer().bytes) {
            throw disconnect("READ_REPLY of " + r.data().remaining() + " bytes for a READ of " + p.xfer().bytes);
        }
        scatter(r.data(), p.localAddresses(), p.lengths());
        p.releaseRegions();
        p.xfer().succeed();
        if (p.notification() != null) {
            writer.notif(p.notification());
        }
    }

    /** Copies {@code data} (a view into the frame reader's direct buffer) out to host memory ranges, in order. */
    private static void scatter(ByteBuffer data, long[] addresses, long[] lengths) {
        NativeMemory.scatter(NativeMemory.address(data) + data.position(), addresses, lengths, 0, addresses.length);
    }

    private void onReadNack(ControlFrame.ReadNack n) {
        Post p = awaitingData.remove(n.xfer());
        if (p == null) {
            throw disconnect("READ_NACK for unknown transfer " + n.xfer());
        }
        p.releaseRegions();
        p.xfer().fail(new TransferException(RefusalCode.ofWire(n.status()).code(),
                "peer " + peerName + " refused the READ (a remote range is outside its registered memory?)"));
    }

    private void receive(ReceivePlan op) {
        live.add(op);
        if (op.chunks == 0) {
            received(op);
        } else {
            pipeline.receive(op);
        }
    }

    /** Whether packed chunks may gather from or scatter into {@code regions}: one kind of memory, one the unpacker reaches. */
    private boolean packs(LocalRegion[] regions) {
        MemoryKind kind = LocalRegion.oneKind(regions);
        return kind != null && unpacker.reaches(kind);
    }

    // ------------------------------------------------------------------ completions

    @Override
    public void sent(SendPlan op) {
        if (op.xfer != null) {
            maybeFinishWrite(op);
        } else {
            // a READ's target: its last byte left
            live.remove(op);
            op.releaseRegions();
            traffic.served(op.bytes);
        }
    }

    private void maybeFinishWrite(SendPlan op) {
        if (!op.finished()) {
            return;
        }
        awaitingAck.remove(op.xferId);
        live.remove(op);
        op.releaseRegions();
        endWrite(op.xfer, op.ackStatus());
    }

    /** Ends a WRITE whose pins were released, as its WRITE_ACK's {@code status} says. */
    private void endWrite(PostedTransfer x, RefusalCode status) {
        if (status == RefusalCode.NONE) {
            x.succeed();
        } else {
            x.fail(new TransferException(status.code(),
                    "peer " + peerName + " refused the WRITE (a remote range is outside its registered memory?)"));
        }
    }

    @Override
    public void received(ReceivePlan op) {
        live.remove(op);
        op.releaseRegions();
        if (op.xfer == null) {
            // WRITE target: the last byte is in place, so the notification may go out, then the ack
            if (!op.discards()) {
                traffic.wrote(op.bytes);
                if (op.notification != null) {
                    deliver.accept(op.notification);
                }
            }
            writer.writeAck(op.xferId, op.refusal);
        } else {
            op.xfer.succeed();
            if (op.notification != null) {
                writer.notif(op.notification);
            }
        }
    }

    // ------------------------------------------------------------------ ending

    /** Fails every transfer in flight with {@code reason} and closes the comms. Called once. */
    public void close(TransferException reason) {
        List<ChunkPlan> ops = new ArrayList<>(live);
        live.clear();
        for (ChunkPlan op : ops) {
            op.releaseRegions();
            PostedTransfer x = op instanceof SendPlan o ? o.xfer : ((ReceivePlan) op).xfer;
            if (x != null) {
                x.fail(reason);
            }
        }
        for (Post p : awaitingData.values()) {
            p.releaseRegions();
            p.xfer().fail(reason);
        }
        for (Post p : awaitingInlineAck.values()) {
            p.releaseRegions();
            p.xfer().fail(reason);
        }
        awaitingData.clear();
        awaitingInlineAck.clear();
        awaitingAck.clear();
        pipeline.close();
    }

    /** Transfers in flight (announced, awaiting their data or an inline WRITE's ack); a racy read from any thread. */
    public int liveOps() {
        return live.size() + awaitingData.size() + awaitingInlineAck.size();
    }

    private static TransferException disconnect(String message) {
        return new TransferException(Code.REMOTE_DISCONNECT, message);
    }
}
