package io.tcpx4j.domain.peer;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.control.ControlStream;
import io.tcpx4j.domain.datapath.ChunkMover;
import io.tcpx4j.domain.datapath.DataChannels;
import io.tcpx4j.domain.datapath.TransferProtocol;
import io.tcpx4j.domain.idle.IdleSelector;
import io.tcpx4j.domain.log.RateLimitedLog;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameWriter;
import io.tcpx4j.domain.protocol.RefusalCode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A connection to one peer: an ordered control stream (plain TCP, or TLS when configured) that carries
 * the handshake and the announcements, plus the {@link TransferProtocol} of C data channels once the handshake
 * is done.
 *
 * <p>The states follow the {@link Handshake} (HELLO, CHALLENGE, PROOF; then the acceptor admits the
 * connection through {@link ConnectionEvents#admit} and answers HELLO_OK or REJECT); both sides then
 * exchange their channels' handles.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent, except {@link #outstandingRequests()} and
 * {@link #liveOps()} (racy reads for stats).
 */
final class Connection {

    private static final System.Logger LOG = System.getLogger(Connection.class.getName());
    /** Refused connections are the peer's doing: rate-limited, so that a hostile peer cannot flood the log. */
    private static final RateLimitedLog REFUSALS = new RateLimitedLog(LOG);

    /** Dialer: CONNECTING, HELLO_SENT, PROOF_SENT. Acceptor: AWAIT_HELLO, AWAIT_PROOF. */
    enum State { CONNECTING, HELLO_SENT, PROOF_SENT, AWAIT_HELLO, AWAIT_PROOF, ESTABLISHED, CLOSED }

    private final EngineContext ctx;
    private final EngineConfig cfg;
    private final ConnectionEvents events;
    private final ControlStream control;
    private final FrameWriter writer;
    private final boolean dialer;
    private final Handshake handshake;
    private String peerName;
    private State state;
    private long peerIncarnation;

    // the configuration's timeouts in nanoseconds, read every cycle
    private final long peerTimeoutNanos;
    private final long heartbeatNanos;
    private final long connectTimeoutNanos;
    private final long startedNanos;
    private long lastRecvNanos;
    private long lastSendNanos;
    /** What a control read needs, made once: a read per cycle allocates nothing. */
    private final Supplier<Object> name = this::peerName;
    private final Consumer<ControlFrame> onFrame = this::handle;
    private int dataWork;
    // set once on the agent when the handshake is done; stats() reads channels racily
    private DataChannels channels;
    /** The agent's selector, which the data channels' comms register their sockets with where the transport asks. */
    private IdleSelector readiness;
    /** Whether every data channel is up ({@link DataChannels#isReady}), kept here: each cycle asks. */
    private boolean channelsUp;
    private ChunkMover pipeline;
    private TransferProtocol data;
    private boolean failed;

    private Connection(EngineContext ctx, ConnectionEvents events, ControlStream control, String peerName,
                       byte[] peerSecret) {
        this.ctx = ctx;
        this.cfg = ctx.config();
        this.events = events;
        this.control = control;
        this.writer = control.writer;
        this.dialer = peerSecret != null;
        this.handshake = dialer ? Handshake.dialer(ctx.identity(), peerName, peerSecret)
                : Handshake.acceptor(ctx.identity());
        this.peerName = peerName;
        this.state = dialer ? State.CONNECTING : State.AWAIT_HELLO;
        this.peerTimeoutNanos = cfg.peerTimeout().toNanos();
        this.heartbeatNanos = cfg.heartbeat().toNanos();
        this.connectTimeoutNanos = cfg.connectTimeout().toNanos();
        this.startedNanos = ctx.now();
        this.lastRecvNanos = startedNanos;
        this.lastSendNanos = startedNanos;
        control.maxFrame(Handshake.UNAUTHENTICATED_MAX_FRAME); // until the peer proved the secret
    }

    /** Starts dialing {@code peerName} at {@code address}, to prove {@code peerSecret} once connected. */
    static Connection dial(EngineContext ctx, ConnectionEvents events, String peerName, InetSocketAddress address,
                           byte[] peerSecret) throws IOException {
        return new Connection(ctx, events, ControlStream.dial(address, ctx.config()), peerName, peerSecret);
    }

    /** Wraps an accepted control socket; the peer is known once its HELLO arrives. */
    static Connection accepted(EngineContext ctx, ConnectionEvents events, SocketChannel s) throws IOException {
        return new Connection(ctx, events, ControlStream.accepted(s, ctx.config()), null, null);
    }

    boolean isDialer() {
        return dialer;
    }

    boolean isEstablished() {
        return state == State.ESTABLISHED;
    }

    boolean isClosed() {
        return state == State.CLOSED;
    }

    /** Lets an idle agent wake when the control stream can connect or read, and the agent's poll see its bytes. */
    void watch(IdleSelector readiness) {
        this.readiness = readiness;
        control.watch(readiness);
    }

    /**
     * Whether only an event a driver can block on (a control frame, the socket connecting, a command, and
     * with {@code transportSignals} a transport completion or a data channel coming up) can move this
     * connection on: no frame to flush and, without {@code transportSignals}, nothing on the transport or
     * waiting to be posted.
     */
    boolean quiet(boolean transportSignals) {
        return switch (state) {
            case CLOSED, CONNECTING -> true;
            case AWAIT_HELLO, AWAIT_PROOF, HELLO_SENT, PROOF_SENT -> control.settled();
            case ESTABLISHED -> control.settled() && (transportSignals || channelsUp && pipeline.quiet());
        };
    }

    /** The peer's incarnation, known once the handshake is done. */
    long peerIncarnation() {
        return peerIncarnation;
    }

    // ------------------------------------------------------------------ duty cycle

    /**
     * One pass: control I/O, channel set-up, data progress, timeouts; returns work done. {@code polled}:
     * the directory polled its readiness ({@link IdleSelector#poll()}), which then decides when an established connection reads
     * ({@link ControlStream#readDue}).
     */
    int doWork(long now, boolean polled) {
        if (state == State.CLOSED) {
            return 0;
        }
        int work = 0;
        try {
            if (state == State.CONNECTING) {
                if (!control.finishConnect()) {
                    return checkTimeouts(now);
                }
                handshake.hello(writer, cfg.channels(), cfg.inlineLimit());
                state = State.HELLO_SENT;
                work++;
            }
            boolean pollDecides = polled && state == State.ESTABLISHED;
            if (control.readDue(now, pollDecides,
                    !pollDecides && dataWork == 0 && (state != State.ESTABLISHED || pipeline.quiet()))) {
                work += readControl(now);
            }
            dataWork = 0;
            if (state == State.ESTABLISHED) {
                work += setUpChannels(now);
                dataWork = pipeline.progress(data);
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

    private int setUpChannels(long now) {
        if (channelsUp) {
            return 0;
        }
        int work = channels.setUp(ctx.name(), peerName);
        if (channels.isReady()) {
            channelsUp = true;
            lastRecvNanos = now; // the peer's silence is measured from when the channels are up
        }
        return work;
    }

    private String peerName() {
        return peerName == null ? String.valueOf(control.remoteAddress()) : peerName;
    }

    private static TransferException disconnect(String message, Throwable cause) {
        return new TransferException(Code.REMOTE_DISCONNECT, message, cause);
    }

    private int readControl(long now) throws IOException {
        int fills = control.readFrames(name, onFrame);
        if (fills < 0) {
            fail(disconnect("control stream closed by " + peerName(), null));
            return 1;
        }
        if (fills > 0) {
            lastRecvNanos = now;
        }
        return fills;
    }

    private int flush(long now) throws IOException {
        if (control.flush() > 0) {
            lastSendNanos = now;
            return 1;
        }
        return 0;
    }

    private int checkTimeouts(long now) {
        if (state == State.ESTABLISHED && channelsUp) {
            if (now - lastRecvNanos > peerTimeoutNanos) {
                fail(disconnect("peer " + peerName() + " silent for " + cfg.peerTimeout().toMillis() + " ms", null));
                return 1;
            }
            if (now - lastSendNanos > heartbeatNanos && writer.isEmpty()) {
                writer.ping();
                return 1;
            }
        } else if (now - startedNanos > connectTimeoutNanos) {
            fail(disconnect("connection to " + peerName() + " not up after "
                    + cfg.connectTimeout().toMillis() + " ms (state " + state + ")", null));
            return 1;
        }
        return 0;
    }

    // ------------------------------------------------------------------ control frames

    private void handle(ControlFrame f) {
        switch (state) {
            case AWAIT_HELLO -> onHello(Handshake.expect(f, ControlFrame.Hello.class));
            case AWAIT_PROOF -> onProof(Handshake.expect(f, ControlFrame.Proof.class));
            case HELLO_SENT, PROOF_SENT -> {
                if (f instanceof ControlFrame.Reject r) {
                    onReject(r);
                } else if (state == State.HELLO_SENT) {
                    onChallenge(Handshake.expect(f, ControlFrame.Challenge.class));
                } else {
                    onHelloOk(Handshake.expect(f, ControlFrame.HelloOk.class));
                }
            }
            default -> onEstablishedFrame(f);
        }
    }

    private void onEstablishedFrame(ControlFrame f) {
        if (data.onFrame(f)) {
            return;
        }
        if (f instanceof ControlFrame.Notif n) {
            events.deliver(n.message());
        } else if (f instanceof ControlFrame.Ping) {
            // lastRecvNanos already moved
        } else if (f instanceof ControlFrame.Bye) {
            end(disconnect("peer " + peerName() + " disconnected", null), true);
            control.close();
        } else {
            throw disconnect("unexpected " + f.getClass().getSimpleName() + " from " + peerName(), null);
        }
    }

    private void onHello(ControlFrame.Hello h) {
        Handshake.Refusal refusal = handshake.challenge(h, writer);
        if (refusal != null) {
            refuse(refusal);
            return;
        }
        state = State.AWAIT_PROOF;
    }

    private void onProof(ControlFrame.Proof p) {
        ControlFrame.Hello h = handshake.hello();
        Handshake.Refusal refusal = handshake.check(p);
        if (refusal == null) {
            refusal = events.admit(h.name(), h.incarnation());
        }
        if (refusal != null) {
            refuse(refusal);
            return;
        }
        peerName = h.name();
        control.maxFrame(ControlFrame.MAX_FRAME);
        peerIncarnation = h.incarnation();
        int c = Math.min(h.channels(), cfg.channels());
        writer.helloOk(ctx.name(), ctx.identity().incarnation(), c, cfg.inlineLimit());
        establish(c, h.inlineLimit());
    }

    private void refuse(Handshake.Refusal refusal) {
        if (refusal.code() != RefusalCode.DUPLICATE) {
            REFUSALS.log(System.Logger.Level.WARNING, "refusing connection from {0}: {1}", control.remoteAddress(),
                    refusal.why());
        }
        writer.reject(refusal.code(), refusal.why());
        control.flushQuietly();
        abandon();
        events.closed(null);
    }

    private void onChallenge(ControlFrame.Challenge c) {
        byte[] proof = handshake.answer(c);
        if (proof == null) {
            // a peer that cannot prove it holds the secret gets nothing more from us, not even our proof
            fail(new TransferException(Code.NOT_ALLOWED,
                    "peer " + peerName + " could not prove it holds the secret from its conn-info"));
            return;
        }
        control.maxFrame(ControlFrame.MAX_FRAME);
        writer.proof(proof);
        state = State.PROOF_SENT;
    }

    private void onHelloOk(ControlFrame.HelloOk ok) {
        handshake.check(ok, cfg.channels());
        peerIncarnation = ok.incarnation();
        establish(ok.channels(), ok.inlineLimit());
    }

    private void onReject(ControlFrame.Reject r) {
        RefusalCode code = RefusalCode.ofWire(r.status());
        if (code == RefusalCode.DUPLICATE) {
            // The peer keeps the connection it dialed; our pending work moves there once it is up.
            abandon();
            events.crossingLost();
            return;
        }
        fail(new TransferException(code.code(), "peer " + peerName() + " refused: " + r.message()));
        control.close();
    }

    /** {@code peerInlineLimit}: the most bytes the peer takes in one WRITE_INLINE, as its handshake said. */
    private void establish(int channelCount, int peerInlineLimit) {
        channels = new DataChannels(ctx.transport(), channelCount, ctx::deviceFor, readiness);
        pipeline = new ChunkMover(ctx.transport(), ctx.unpacker(), ctx.registry(), channels, cfg);
        data = new TransferProtocol(ctx.name(), peerName, cfg, ctx.unpacker(), ctx.registry(), writer, events::deliver,
                events.traffic(), channels, pipeline, peerInlineLimit);
        state = State.ESTABLISHED;
        lastRecvNanos = ctx.now();
        writer.handles(channels.handles());
        events.established();
    }

    /** The transfers of this connection: where a validated post starts, once the connection is established. */
    TransferProtocol transfers() {
        return data;
    }

    void sendNotification(byte[] message) {
        writer.notif(message);
    }

    /** Closes a connection that never carried anything (a lost crossing dial, a refused peer). */
    void abandon() {
        state = State.CLOSED;
        failed = true;
        control.close();
    }

    /** Graceful close: tell the peer, then fail what is still in flight. */
    void bye(TransferException reason) {
        if (state == State.ESTABLISHED) {
            writer.bye();
            control.flushQuietly();
        }
        end(reason, true);
        control.close();
    }

    /**
     * Fails every transfer of this connection with {@code reason}, frees its comms and registrations and
     * tells the engine. Idempotent.
     */
    void fail(TransferException reason) {
        end(reason, false);
    }

    /**
     * Ends the connection. An orderly end (a BYE either way) is logged at DEBUG; a lost connection at
     * INFO, or WARNING when it took transfers with it: those levels are for what a user must know.
     */
    private void end(TransferException reason, boolean orderly) {
        if (failed) {
            return;
        }
        failed = true;
        boolean wasEstablished = state == State.ESTABLISHED;
        state = State.CLOSED;
        if (wasEstablished) {
            System.Logger.Level level = orderly ? System.Logger.Level.DEBUG
                    : data != null && data.liveOps() > 0 ? System.Logger.Level.WARNING : System.Logger.Level.INFO;
            LOG.log(level, "{0}: connection to {1} closed: {2}", ctx.name(), peerName(), reason.getMessage());
        }
        if (data != null) {
            data.close(reason);
        }
        control.close();
        events.closed(reason);
    }

    /** Requests held on the transport right now (for leak checks); a racy read from any thread. */
    int outstandingRequests() {
        DataChannels c = channels;
        return c == null ? 0 : c.outstandingRequests();
    }

    /** Transfers in flight; a racy read from any thread. */
    int liveOps() {
        TransferProtocol d = data;
        return d == null ? 0 : d.liveOps();
    }
}
