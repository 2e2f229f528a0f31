package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.Unpacker;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameReader;
import io.tcpx4j.domain.protocol.FrameWriter;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A connection to one peer: an ordered control stream (plain TCP) plus C data channels.
 *
 * <p>For each direction the data sender is the only ordering authority: it writes a WRITE or
 * READ_DATA frame announcing a chunk sequence, then posts the sends; chunk k of the direction's
 * stream travels on channel k mod C. The receiver posts receives in exactly the announced order.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class Connection {

    private static final System.Logger LOG = System.getLogger(Connection.class.getName());
    /** Frames a peer may send before it proved it holds our secret. */
    private static final int UNAUTHENTICATED_MAX_FRAME = 1024;
    /** Status in REJECT that means "a crossing connection of ours wins; use that one". */
    static final int REJECT_DUPLICATE = 1;

    enum State { CONNECTING, HELLO_SENT, AWAIT_HELLO, ESTABLISHED, CLOSED }

    final Engine engine;
    final EngineConfig cfg;
    final NetTransport transport;
    final Unpacker unpacker;
    final boolean dialer;
    final SocketChannel sock;
    Peer peer;
    State state;
    long peerIncarnation;

    private final FrameReader reader = new FrameReader();
    private final FrameWriter writer = new FrameWriter();
    private final long startedNanos;
    private long lastRecvNanos;
    private long lastSendNanos;
    private long lastControlPoll;
    private int dataWork;
    private static final long CONTROL_POLL_NANOS = 20_000;

    Channel[] channels;
    private boolean channelsReady;
    private boolean failed;

    private final ArrayDeque<OutOp> outQueue = new ArrayDeque<>();
    private long outSeq;
    private final ArrayDeque<InOp> inQueue = new ArrayDeque<>();
    private long inSeq;
    private final Map<Long, OutOp> awaitingAck = new HashMap<>();
    private final Map<Long, Post> awaitingData = new HashMap<>();
    private final Set<ChunkPlan> live = Collections.newSetFromMap(new IdentityHashMap<>());
    final Set<RegistrationGroup> registeredGroups = Collections.newSetFromMap(new IdentityHashMap<>());

    private Connection(Engine engine, boolean dialer, SocketChannel sock, Peer peer, State state) {
        this.engine = engine;
        this.cfg = engine.config();
        this.transport = engine.transport();
        this.unpacker = engine.unpacker();
        this.dialer = dialer;
        this.sock = sock;
        this.peer = peer;
        this.state = state;
        this.startedNanos = engine.now();
        this.lastRecvNanos = startedNanos;
        this.lastSendNanos = startedNanos;
        if (!dialer) {
            reader.maxFrame(UNAUTHENTICATED_MAX_FRAME);
        }
    }

    /** Starts dialing a peer. */
    static Connection dial(Engine engine, Peer peer, InetSocketAddress address) throws IOException {
        SocketChannel s = SocketChannel.open();
        try {
            s.configureBlocking(false);
            s.setOption(StandardSocketOptions.TCP_NODELAY, true);
            s.connect(address);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        return new Connection(engine, true, s, peer, State.CONNECTING);
    }

    /** Wraps an accepted control socket; the peer is known once its HELLO arrives. */
    static Connection accepted(Engine engine, SocketChannel s) throws IOException {
        s.configureBlocking(false);
        s.setOption(StandardSocketOptions.TCP_NODELAY, true);
        return new Connection(engine, false, s, null, State.AWAIT_HELLO);
    }

    boolean isEstablished() {
        return state == State.ESTABLISHED;
    }

    boolean isClosed() {
        return state == State.CLOSED;
    }

    // ------------------------------------------------------------------ duty cycle

    /** One pass: control I/O, channel set-up, data progress, timeouts. Returns work done. */
    int doWork(long now) {
        if (state == State.CLOSED) {
            return 0;
        }
        int work = 0;
        try {
            if (state == State.CONNECTING) {
                if (!sock.finishConnect()) {
                    return checkTimeouts(now);
                }
                writer.hello(engine.name(), engine.incarnation(), peer.info.secret(), cfg.channels());
                state = State.HELLO_SENT;
                work++;
            }
            // While data moves, chunks are in flight anyway: poll the control socket at most every
            // CONTROL_POLL_NANOS instead of paying a read syscall per duty cycle.
            if (dataWork == 0 || now - lastControlPoll >= CONTROL_POLL_NANOS) {
                lastControlPoll = now;
                work += readControl(now);
            }
            dataWork = 0;
            if (state == State.ESTABLISHED) {
                if (!channelsReady) {
                    work += setUpChannels();
                }
                dataWork = progressData();
                work += dataWork;
            }
            work += checkTimeouts(now);
            work += flush(now);
        } catch (TransferException e) {
            fail(e.code() == Code.CANCELED ? e : disconnect("transport failed: " + e.getMessage(), e));
            work++;
        } catch (IOException e) {
            fail(disconnect("control stream to " + peerName() + " failed: " + e, e));
            work++;
        }
        return work;
    }

    private String peerName() {
        return peer == null ? String.valueOf(remoteAddress()) : peer.name;
    }

    private Object remoteAddress() {
        try {
            return sock.getRemoteAddress();
        } catch (IOException e) {
            return "?";
        }
    }

    private static TransferException disconnect(String message, Throwable cause) {
        return new TransferException(Code.REMOTE_DISCONNECT, message, cause);
    }

    private int readControl(long now) throws IOException {
        int work = 0;
        for (int i = 0; i < 8 && state != State.CLOSED; i++) {
            int n = reader.fill(sock);
            if (n < 0) {
                fail(disconnect("control stream closed by " + peerName(), null));
                return work + 1;
            }
            if (n == 0) {
                break;
            }
            lastRecvNanos = now;
            work++;
            ControlFrame f;
            while (state != State.CLOSED && (f = nextFrame()) != null) {
                handle(f);
            }
        }
        return work;
    }

    private ControlFrame nextFrame() {
        try {
            return reader.next();
        } catch (TransferException e) {
            // a peer that speaks garbage is treated like one that went away
            throw disconnect("protocol error from " + peerName() + ": " + e.getMessage(), e);
        }
    }

    private int flush(long now) throws IOException {
        if (writer.isEmpty()) {
            return 0;
        }
        ByteBuffer p = writer.pending();
        int n;
        try {
            n = sock.write(p);
        } finally {
            writer.compact();
        }
        if (n > 0) {
            lastSendNanos = now;
        }
        return n > 0 ? 1 : 0;
    }

    private int checkTimeouts(long now) {
        if (state == State.ESTABLISHED && channelsReady) {
            if (now - lastRecvNanos > cfg.peerTimeout().toNanos()) {
                fail(disconnect("peer " + peerName() + " silent for " + cfg.peerTimeout().toMillis() + " ms", null));
                return 1;
            }
            if (now - lastSendNanos > cfg.heartbeat().toNanos() && writer.isEmpty()) {
                writer.ping();
                return 1;
            }
        } else if (now - startedNanos > cfg.connectTimeout().toNanos()) {
            fail(disconnect("connection to " + peerName() + " not up after "
                    + cfg.connectTimeout().toMillis() + " ms (state " + state + ")", null));
            return 1;
        }
        return 0;
    }

    // ------------------------------------------------------------------ control frames

    private void handle(ControlFrame f) {
        switch (state) {
            case AWAIT_HELLO -> {
                if (!(f instanceof ControlFrame.Hello h)) {
                    throw disconnect("expected HELLO, got " + f.getClass().getSimpleName(), null);
                }
                onHello(h);
                return;
            }
            case HELLO_SENT -> {
                if (f instanceof ControlFrame.HelloOk ok) {
                    onHelloOk(ok);
                } else if (f instanceof ControlFrame.Reject r) {
                    onReject(r);
                } else {
                    throw disconnect("expected HELLO_OK, got " + f.getClass().getSimpleName(), null);
                }
                return;
            }
            default -> {
            }
        }
        if (f instanceof ControlFrame.Handles h) {
            onHandles(h);
        } else if (f instanceof ControlFrame.Write w) {
            onWrite(w);
        } else if (f instanceof ControlFrame.WriteAck a) {
            onWriteAck(a);
        } else if (f instanceof ControlFrame.Read r) {
            onRead(r);
        } else if (f instanceof ControlFrame.ReadData d) {
            onReadData(d);
        } else if (f instanceof ControlFrame.ReadNack n) {
            onReadNack(n);
        } else if (f instanceof ControlFrame.Notif n) {
            engine.deliver(peer.name, n.message());
        } else if (f instanceof ControlFrame.Ping) {
            // lastRecvNanos already moved
        } else if (f instanceof ControlFrame.Bye) {
            fail(disconnect("peer " + peerName() + " disconnected", null));
            closeQuietly();
        } else {
            throw disconnect("unexpected " + f.getClass().getSimpleName() + " from " + peerName(), null);
        }
    }

    private void onHello(ControlFrame.Hello h) {
        if (h.version() != ControlFrame.PROTOCOL_VERSION) {
            refuse(Code.NOT_SUPPORTED, "protocol version " + h.version() + ", this engine speaks "
                    + ControlFrame.PROTOCOL_VERSION);
            return;
        }
        if (!engine.secretMatches(h.secret())) {
            refuse(Code.NOT_ALLOWED, "wrong connection secret");
            return;
        }
        if (h.name().equals(engine.name())) {
            refuse(Code.INVALID_PARAM, "peer uses this engine's own name " + h.name());
            return;
        }
        if (h.channels() < 1) {
            refuse(Code.INVALID_PARAM, "no channels");
            return;
        }
        if (!engine.admit(this, h.name(), h.incarnation())) {
            refuse(REJECT_DUPLICATE, "a crossing connection dialed by " + engine.name() + " wins");
            return;
        }
        reader.maxFrame(ControlFrame.MAX_FRAME);
        peerIncarnation = h.incarnation();
        int c = Math.min(h.channels(), cfg.channels());
        writer.helloOk(engine.name(), engine.incarnation(), c);
        establish(c);
    }

    private void refuse(Code code, String why) {
        LOG.log(System.Logger.Level.WARNING, "refusing connection from {0}: {1}", remoteAddress(), why);
        refuse(code.nixlStatus(), why);
    }

    private void refuse(int status, String why) {
        writer.reject(status, why);
        state = State.CLOSED;
        failed = true;
        engine.forgetClosed(this);
        try {
            ByteBuffer p = writer.pending();
            sock.write(p);
        } catch (IOException ignored) {
            // best effort: the peer learns from the close
        } finally {
            writer.compact();
        }
        closeQuietly();
    }

    private void onHelloOk(ControlFrame.HelloOk ok) {
        if (!ok.name().equals(peer.name)) {
            throw disconnect("dialed " + peer.name + " but " + ok.name() + " answered", null);
        }
        if (ok.channels() < 1 || ok.channels() > cfg.channels()) {
            throw disconnect("peer chose " + ok.channels() + " channels, asked for " + cfg.channels(), null);
        }
        peerIncarnation = ok.incarnation();
        establish(ok.channels());
    }

    private void onReject(ControlFrame.Reject r) {
        if (r.nixlStatus() == REJECT_DUPLICATE) {
            // The peer keeps the connection it dialed; our pending work moves there once it is up.
            state = State.CLOSED;
            failed = true;
            closeQuietly();
            engine.crossingLost(this);
            return;
        }
        fail(new TransferException(Code.ofNixlStatus(r.nixlStatus()), "peer " + peerName() + " refused: " + r.message()));
        closeQuietly();
    }

    private void establish(int c) {
        state = State.ESTABLISHED;
        lastRecvNanos = engine.now();
        channels = new Channel[c];
        byte[][] handles = new byte[c][];
        for (int i = 0; i < c; i++) {
            channels[i] = new Channel(i, engine.deviceFor(i));
            channels[i].listener = transport.listen(channels[i].device);
            handles[i] = channels[i].listener.handle();
        }
        writer.handles(handles);
        engine.established(this);
    }

    private void onHandles(ControlFrame.Handles h) {
        if (h.handles().length != channels.length) {
            throw disconnect("peer sent " + h.handles().length + " handles for " + channels.length + " channels", null);
        }
        for (int i = 0; i < channels.length; i++) {
            if (channels[i].peerHandle != null) {
                throw disconnect("peer sent HANDLES twice", null);
            }
            channels[i].peerHandle = h.handles()[i];
        }
    }

    private int setUpChannels() {
        int work = 0;
        boolean all = true;
        for (Channel ch : channels) {
            if (ch.send == null && ch.peerHandle != null) {
                ch.send = transport.connect(ch.device, ch.peerHandle);
                if (ch.send != null) {
                    work++;
                }
            }
            if (ch.recv == null) {
                ch.recv = transport.accept(ch.listener);
                if (ch.recv != null) {
                    transport.closeListen(ch.listener);
                    ch.listener = null;
                    work++;
                }
            }
            all &= ch.ready();
        }
        if (all) {
            channelsReady = true;
            lastRecvNanos = engine.now();
            LOG.log(System.Logger.Level.DEBUG, "{0}: {1} channels up to {2}", engine.name(), channels.length, peer.name);
        }
        return work;
    }

    // ------------------------------------------------------------------ starting transfers

    /** Announces and queues a validated post. */
    void start(Post p) {
        int n = p.lengths().length;
        if (p.write()) {
            writer.write(p.xfer().id, cfg.chunkSize(), p.notification(), p.remoteAddresses(), p.lengths(), n);
            OutOp op = new OutOp(p.xfer(), p.xfer().id, p.localAddresses(), p.lengths(), p.regions(), cfg.chunkSize());
            awaitingAck.put(op.xferId, op);
            live.add(op);
            if (op.chunks > 0) {
                outQueue.add(op);
            }
        } else {
            writer.read(p.xfer().id, p.remoteAddresses(), p.lengths(), n);
            awaitingData.put(p.xfer().id, p);
        }
    }

    void sendNotification(byte[] message) {
        writer.notif(message);
    }

    private void onWrite(ControlFrame.Write w) {
        checkChunk(w.chunkSize());
        LocalRegion[] regions = new LocalRegion[w.lengths().length];
        int refusal = engine.admitRemoteAccess(w.addresses(), w.lengths(), regions);
        InOp op = new InOp(null, w.xfer(), w.addresses(), w.lengths(), refusal == 0 ? regions : null,
                w.chunkSize(), w.notification(), refusal);
        if (refusal != 0) {
            LOG.log(System.Logger.Level.WARNING, "{0}: refused WRITE {1} from {2} (status {3}); draining its data",
                    engine.name(), w.xfer(), peer.name, refusal);
        }
        live.add(op);
        if (op.chunks == 0) {
            finishIn(op);
        } else {
            inQueue.add(op);
        }
    }

    private void onWriteAck(ControlFrame.WriteAck a) {
        OutOp op = awaitingAck.get(a.xfer());
        if (op == null || op.acked) {
            throw disconnect("WRITE_ACK for unknown transfer " + a.xfer(), null);
        }
        op.acked = true;
        op.ackStatus = a.nixlStatus();
        maybeFinishWrite(op);
    }

    private void onRead(ControlFrame.Read r) {
        LocalRegion[] regions = new LocalRegion[r.lengths().length];
        int refusal = engine.admitRemoteAccess(r.addresses(), r.lengths(), regions);
        if (refusal != 0) {
            LOG.log(System.Logger.Level.WARNING, "{0}: refused READ {1} from {2} (status {3})",
                    engine.name(), r.xfer(), peer.name, refusal);
            writer.readNack(r.xfer(), refusal);
            return;
        }
        writer.readData(r.xfer(), cfg.chunkSize());
        OutOp op = new OutOp(null, r.xfer(), r.addresses(), r.lengths(), regions, cfg.chunkSize());
        if (op.chunks == 0) {
            op.releaseRegions();
        } else {
            live.add(op);
            outQueue.add(op);
        }
    }

    private void onReadData(ControlFrame.ReadData d) {
        checkChunk(d.chunkSize());
        Post p = awaitingData.remove(d.xfer());
        if (p == null) {
            throw disconnect("READ_DATA for unknown transfer " + d.xfer(), null);
        }
        InOp op = new InOp(p.xfer(), d.xfer(), p.localAddresses(), p.lengths(), p.regions(), d.chunkSize(),
                p.notification(), 0);
        live.add(op);
        if (op.chunks == 0) {
            finishIn(op);
        } else {
            inQueue.add(op);
        }
    }

    private void onReadNack(ControlFrame.ReadNack n) {
        Post p = awaitingData.remove(n.xfer());
        if (p == null) {
            throw disconnect("READ_NACK for unknown transfer " + n.xfer(), null);
        }
        p.releaseRegions();
        p.xfer().fail(new TransferException(Code.ofNixlStatus(n.nixlStatus()),
                "peer " + peer.name + " refused the READ (a remote range is outside its registered memory?)"));
    }

    private static void checkChunk(int chunk) {
        if (chunk < 1 || chunk > EngineConfig.MAX_CHUNK) {
            throw disconnect("peer announced chunk size " + chunk, null);
        }
    }

    // ------------------------------------------------------------------ data path

    private int progressData() {
        int work = 0;
        if (!channelsReady) {
            return 0;
        }
        work += testSends();
        work += testReceives();
        work += consumeReceives();
        work += postReceives();
        work += postSends();
        return work;
    }

    private int postSends() {
        int work = 0;
        int c = channels.length;
        while (!outQueue.isEmpty()) {
            OutOp op = outQueue.peek();
            if (!op.hasNext()) {
                outQueue.poll();
                continue;
            }
            Channel ch = channels[(int) (outSeq % c)];
            if (ch.txCount >= cfg.sendWindow()) {
                break;
            }
            LocalRegion region = op.regions[op.nextDesc()];
            MemoryRegistration mr = region.group.on(transport, ch.send, this);
            NetRequest req = transport.isend(ch.send, op.nextAddress(), op.nextLength(), (int) outSeq, mr);
            if (req == null) {
                break;
            }
            int s = Channel.slot(ch.txHead, ch.txCount);
            ch.txOp[s] = op;
            ch.txReq[s] = req;
            ch.txCount++;
            op.advance();
            outSeq++;
            work++;
        }
        return work;
    }

    private int testSends() {
        int work = 0;
        for (Channel ch : channels) {
            while (ch.txCount > 0) {
                int s = ch.txHead;
                if (!transport.test(ch.txReq[s])) {
                    break;
                }
                OutOp op = ch.txOp[s];
                ch.txOp[s] = null;
                ch.txReq[s] = null;
                ch.txHead = Channel.slot(ch.txHead, 1);
                ch.txCount--;
                op.completed++;
                work++;
                if (op.allCompleted()) {
                    if (op.xfer != null) {
                        maybeFinishWrite(op);
                    } else {
                        live.remove(op);
                        op.releaseRegions();
                    }
                }
            }
        }
        return work;
    }

    private void maybeFinishWrite(OutOp op) {
        if (!op.acked || !op.allCompleted()) {
            return;
        }
        awaitingAck.remove(op.xferId);
        live.remove(op);
        op.releaseRegions();
        if (op.ackStatus == 0) {
            op.xfer.succeed();
        } else {
            op.xfer.fail(new TransferException(Code.ofNixlStatus(op.ackStatus),
                    "peer " + peer.name + " refused the WRITE (a remote range is outside its registered memory?)"));
        }
    }

    private int postReceives() {
        int work = 0;
        int c = channels.length;
        while (!inQueue.isEmpty()) {
            InOp op = inQueue.peek();
            if (!op.hasNext()) {
                inQueue.poll();
                continue;
            }
            Channel ch = channels[(int) (inSeq % c)];
            if (ch.rxCount >= cfg.recvWindow()) {
                break;
            }
            int len = op.nextLength();
            long dst;
            MemoryKind kind;
            LocalRegion region;
            if (op.discards()) {
                region = engine.discardRegion();
                dst = region.range.address();
                kind = MemoryKind.DRAM;
            } else {
                region = op.regions[op.nextDesc()];
                dst = op.nextAddress();
                kind = region.range.kind();
            }
            MemoryRegistration mr = region.group.on(transport, ch.recv, this);
            NetRequest req = transport.irecv(ch.recv, dst, len, (int) inSeq, mr);
            if (req == null) {
                break;
            }
            int s = Channel.slot(ch.rxHead, ch.rxCount);
            ch.rxOp[s] = op;
            ch.rxReq[s] = req;
            ch.rxDst[s] = dst;
            ch.rxKind[s] = kind;
            ch.rxTicket[s] = 0;
            ch.rxPendingTicket[s] = false;
            ch.rxCount++;
            op.advance();
            inSeq++;
            work++;
        }
        return work;
    }

    private int testReceives() {
        int work = 0;
        boolean added = false;
        for (Channel ch : channels) {
            while (ch.rxDone < ch.rxCount) {
                int s = Channel.slot(ch.rxHead, ch.rxDone);
                NetRequest req = ch.rxReq[s];
                if (!transport.test(req)) {
                    break;
                }
                if (!ch.rxOp[s].discards() && req.fragmentCount() > 0) {
                    unpacker.add(req, ch.rxDst[s], ch.rxKind[s]);
                    ch.rxPendingTicket[s] = true;
                    added = true;
                }
                ch.rxDone++;
                work++;
            }
        }
        if (added) {
            // one batch (one kernel launch on a GPU) for everything that completed in this pass
            long ticket = unpacker.submit();
            for (Channel ch : channels) {
                for (int i = 0; i < ch.rxDone; i++) {
                    int s = Channel.slot(ch.rxHead, i);
                    if (ch.rxPendingTicket[s]) {
                        ch.rxPendingTicket[s] = false;
                        ch.rxTicket[s] = ticket;
                    }
                }
            }
        }
        return work;
    }

    private int consumeReceives() {
        int work = 0;
        for (Channel ch : channels) {
            while (ch.rxDone > 0) {
                int s = ch.rxHead;
                long ticket = ch.rxTicket[s];
                if (ticket != 0 && !unpacker.isDone(ticket)) {
                    break;
                }
                transport.consumed(ch.recv, ch.rxReq[s]);
                InOp op = ch.rxOp[s];
                ch.rxOp[s] = null;
                ch.rxReq[s] = null;
                ch.rxHead = Channel.slot(ch.rxHead, 1);
                ch.rxCount--;
                ch.rxDone--;
                op.completed++;
                work++;
                if (op.allCompleted()) {
                    finishIn(op);
                }
            }
        }
        return work;
    }

    private void finishIn(InOp op) {
        live.remove(op);
        op.releaseRegions();
        if (op.xfer == null) {
            // WRITE target: the last byte is in place, so the notification may go out, then the ack
            if (!op.discards() && op.notification != null) {
                engine.deliver(peer.name, op.notification);
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

    /** Drops a dial that lost to a crossing one before it carried anything. */
    void abandon() {
        state = State.CLOSED;
        failed = true;
        closeQuietly();
    }

    /** Graceful close: tell the peer, then fail what is still in flight. */
    void bye(TransferException reason) {
        if (state == State.ESTABLISHED) {
            writer.bye();
            try {
                ByteBuffer p = writer.pending();
                sock.write(p);
            } catch (IOException ignored) {
                // the peer sees EOF instead
            } finally {
                writer.compact();
            }
        }
        fail(reason);
        closeQuietly();
    }

    /**
     * Fails every transfer of this connection with {@code reason}, frees its comms and registrations and
     * tells the engine. Idempotent.
     */
    void fail(TransferException reason) {
        if (failed) {
            return;
        }
        failed = true;
        boolean wasEstablished = state == State.ESTABLISHED;
        state = State.CLOSED;
        if (wasEstablished) {
            LOG.log(System.Logger.Level.INFO, "{0}: connection to {1} closed: {2}", engine.name(), peerName(),
                    reason.getMessage());
        }
        List<ChunkPlan> ops = new ArrayList<>(live);
        live.clear();
        for (ChunkPlan op : ops) {
            op.releaseRegions();
            Xfer x = op instanceof OutOp o ? o.xfer : ((InOp) op).xfer;
            if (x != null) {
                x.fail(reason);
            }
        }
        for (Post p : awaitingData.values()) {
            p.releaseRegions();
            p.xfer().fail(reason);
        }
        awaitingData.clear();
        awaitingAck.clear();
        outQueue.clear();
        inQueue.clear();
        closeChannels();
        closeQuietly();
        engine.failed(this, reason);
    }

    private void closeChannels() {
        if (channels == null) {
            return;
        }
        for (Channel ch : channels) {
            for (RegistrationGroup g : registeredGroups) {
                if (ch.send != null) {
                    g.forget(transport, ch.send);
                }
                if (ch.recv != null) {
                    g.forget(transport, ch.recv);
                }
            }
            try {
                if (ch.send != null) {
                    transport.closeSend(ch.send);
                }
            } catch (RuntimeException ignored) {
                // closing a failed comm may fail too; nothing else to release
            }
            try {
                if (ch.recv != null) {
                    transport.closeRecv(ch.recv);
                }
            } catch (RuntimeException ignored) {
                // as above
            }
            try {
                if (ch.listener != null) {
                    transport.closeListen(ch.listener);
                }
            } catch (RuntimeException ignored) {
                // as above
            }
            ch.send = null;
            ch.recv = null;
            ch.listener = null;
        }
        registeredGroups.clear();
        channels = null;
    }

    private void closeQuietly() {
        try {
            sock.close();
        } catch (IOException ignored) {
            // nothing left to do with a socket that will not close
        }
    }

    /** Requests held on the transport right now (for leak checks). */
    int outstandingRequests() {
        // Engine.stats() calls this from any thread: read the array once, and skip slots that
        // establish() has not filled yet (it publishes the array before creating the channels).
        Channel[] chs = channels;
        int n = 0;
        if (chs != null) {
            for (Channel ch : chs) {
                if (ch != null) {
                    n += ch.outstanding();
                }
            }
        }
        return n;
    }

    int liveOps() {
        return live.size() + awaitingData.size();
    }
}
