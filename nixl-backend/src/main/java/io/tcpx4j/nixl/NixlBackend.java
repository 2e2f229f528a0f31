package io.tcpx4j.nixl;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import static io.tcpx4j.nixl.NixlArgs.requireAgent;
import static io.tcpx4j.nixl.NixlArgs.requireOut;

/**
 * The TCPX backend of NIXL, method for method as NIXL's backend engine declares them
 * ({@code nixlBackendEngine} in backend_engine.h), over one {@link TransferEngine}.
 *
 * <p>Shape, chosen so that the C bridge can call it without building objects per call:
 * <ul>
 *   <li>Every method returns a {@code nixl_status_t} value ({@link NixlStatus}); outputs go into
 *       caller-supplied one-element arrays ({@code long[]} for handles, {@code byte[][]} for blobs).
 *       No method throws for a failure of the operation: a {@link TransferException} becomes its code's
 *       NIXL status, anything else {@link NixlStatus#ERR_UNKNOWN} (and a log line, since that is a bug).</li>
 *   <li>Metadata and transfer handles are {@code long} ids (never 0), the stand-ins for NIXL's
 *       {@code nixlBackendMD*} and {@code nixlBackendReqH*}.</li>
 *   <li>Descriptor lists are parallel primitive arrays: {@code long[] addr, long[] len, int[] devId}
 *       plus {@code long[] md}, the metadata id each descriptor falls in.</li>
 *   <li>Memory types and operations use NIXL's enum values: {@link #DRAM_SEG}, {@link #VRAM_SEG},
 *       {@link #OP_READ}, {@link #OP_WRITE}.</li>
 * </ul>
 *
 * <p>Semantics NIXL agents rely on:
 * <ul>
 *   <li>{@link #postXfer} never blocks and answers {@link NixlStatus#IN_PROG} or {@link NixlStatus#SUCCESS}
 *       (or an error). A handle may be posted again once its last post ended (done or failed); posting it
 *       while that transfer is still in flight answers {@link NixlStatus#ERR_REPOST_ACTIVE} and leaves
 *       the running transfer alone.</li>
 *   <li>{@link #releaseReqH} never blocks: a transfer still in flight is aborted in the background.
 *       Its memory must stay registered and valid until the engine drained it (deregistering is
 *       safe: the engine drops the registration once in-flight accesses ended).</li>
 *   <li>A post that carries a notification (even an empty one) makes the target agent's
 *       {@link #getNotifs} report it exactly once, keyed by this agent's name, and only after every
 *       byte of that post has landed. For a READ the target is the agent that was read from.</li>
 *   <li>Transfers whose remote agent is this agent itself are local copies, never sent over the
 *       network, and still deliver their notification (to this agent).</li>
 *   <li>{@link #loadRemoteConnInfo} and {@link #connect} never block: connecting happens in the
 *       background, and a post to a peer not connected yet simply stays {@code IN_PROG} longer.</li>
 * </ul>
 *
 * <p><b>Thread-safe.</b> NIXL agents call a backend from many threads; every method may be called
 * concurrently. Operations on one transfer handle are serialised on that handle.
 */
public final class NixlBackend implements AutoCloseable {

    /** {@code nixl_mem_t DRAM_SEG}. */
    public static final int DRAM_SEG = 0;
    /** {@code nixl_mem_t VRAM_SEG}. */
    public static final int VRAM_SEG = 1;
    /** {@code nixl_xfer_op_t NIXL_READ}. */
    public static final int OP_READ = 0;
    /** {@code nixl_xfer_op_t NIXL_WRITE}. */
    public static final int OP_WRITE = 1;
    /** {@code nixl_cost_t ANALYTICAL_BACKEND}. */
    public static final int COST_ANALYTICAL_BACKEND = 0;

    private static final System.Logger LOG = System.getLogger(NixlBackend.class.getName());

    private final TransferEngine engine;
    private final boolean inlineProgress;
    private final AutoCloseable resources;
    /** Metadata ids and transfer handles are drawn from one sequence: no id is ever both. */
    private final AtomicLong ids = new AtomicLong();
    private final MetadataTable metadata;
    private final TransferHandles transfers;
    private final PollWait pollWait;
    private final PollWait.Loop notifLoop = new PollWait.Loop();
    private final Queue<Notification> notifications = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /**
     * A backend over an engine that is already running.
     *
     * @param engine    the engine; its {@link TransferEngine#name()} is this agent's name
     * @param resources closed by {@link #close()} after the backend let go of everything (typically
     *                  the engine itself, or the injector that made it)
     * @param cost      the model {@link #estimateXferCost} answers from
     */
    public NixlBackend(TransferEngine engine, AutoCloseable resources, CostModel cost) {
        this(engine, resources, cost, true);
    }

    /**
     * @param inlineProgress whether postXfer, checkXfer and getNotifs run the engine's progress work on
     *                       the caller's thread ({@link TransferEngine#progress()}), as NIXL hosts that
     *                       poll expect; false leaves all of it to the engine's own thread, and polls wait
     *                       up to {@link PollWait#DEFAULT_WINDOW} under CPU contention
     */
    public NixlBackend(TransferEngine engine, AutoCloseable resources, CostModel cost, boolean inlineProgress) {
        this(engine, resources, cost, inlineProgress, PollWait.DEFAULT_WINDOW);
    }

    /**
     * @param pollWait how long a checkXfer or getNotifs that finds nothing new, in a host's poll loop, waits
     *                 for the engine while the caller's CPUs are contended ({@code poll_wait},
     *                 {@link PollWait}); zero never waits, and with inline progress polls never wait
     */
    public NixlBackend(TransferEngine engine, AutoCloseable resources, CostModel cost, boolean inlineProgress,
                       Duration pollWait) {
        this(engine, resources, cost, inlineProgress, PollWait.onHost(inlineProgress ? Duration.ZERO : pollWait));
    }

    NixlBackend(TransferEngine engine, AutoCloseable resources, CostModel cost, boolean inlineProgress,
                PollWait pollWait) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.resources = Objects.requireNonNull(resources, "resources");
        Objects.requireNonNull(cost, "cost");
        this.inlineProgress = inlineProgress;
        this.pollWait = Objects.requireNonNull(pollWait, "pollWait");
        this.metadata = new MetadataTable(engine, ids::incrementAndGet);
        this.transfers = new TransferHandles(engine, metadata, cost, ids::incrementAndGet, pollWait);
        engine.onNotification(this::received);
    }

    /** The engine's listener: queues a notification for getNotifs and wakes a poll that waits for it. */
    private void received(Notification n) {
        notifications.add(n);
        pollWait.signal();
    }

    /** Runs the engine's progress work on this thread when the backend is in inline mode. */
    private void progress() {
        if (inlineProgress) {
            engine.progress();
        }
    }

    /** This agent's name. */
    public String name() {
        return engine.name();
    }

    /** The engine underneath (for tests and tools). */
    public TransferEngine engine() {
        return engine;
    }

    // ------------------------------------------------------------------ capabilities

    /** Transfers to other agents: yes. */
    public boolean supportsRemote() {
        return true;
    }

    /** Transfers within this agent: yes (local copies). */
    public boolean supportsLocal() {
        return true;
    }

    /** Notifications: yes (NIXL requires it of every backend that supports remote transfers). */
    public boolean supportsNotif() {
        return true;
    }

    /** The memory types this backend moves: {@code {DRAM_SEG, VRAM_SEG}}. */
    public int[] getSupportedMems() {
        return new int[] {DRAM_SEG, VRAM_SEG};
    }

    // ------------------------------------------------------------------ memory

    /**
     * Registers one contiguous range. {@code mdOut[0]} receives its metadata id.
     *
     * @return SUCCESS; NOT_SUPPORTED for a memory type other than DRAM or VRAM; INVALID_PARAM for a bad range
     */
    public int registerMem(long addr, long len, int devId, int memType, long[] mdOut) {
        return guard(() -> metadata.register(addr, len, devId, memType, mdOut));
    }

    /** Deregisters what {@link #registerMem} registered. NOT_FOUND for an id that is no registration. */
    public int deregisterMem(long md) {
        return guard(() -> metadata.deregister(md));
    }

    /** The blob a peer passes to its {@link #loadRemoteMD}: {@code out[0]}. */
    public int getPublicData(long md, byte[][] out) {
        return guard(() -> metadata.publicData(md, out));
    }

    /**
     * The target metadata for transfers within this agent into or out of a registration:
     * {@code out[0]}, a new id that {@link #unloadMD} releases (the registration stays).
     */
    public int loadLocalMD(long md, long[] out) {
        return guard(() -> metadata.loadLocal(md, out));
    }

    /**
     * Loads a peer's region: its descriptor (as the peer registered it) and the blob of the peer's
     * {@link #getPublicData}. {@code out[0]} receives the remote metadata id.
     */
    public int loadRemoteMD(long addr, long len, int devId, int memType, byte[] blob, String remoteAgent,
                            long[] out) {
        return guard(() -> metadata.loadRemote(addr, len, devId, memType, blob, remoteAgent, out));
    }

    /** Releases an id from {@link #loadLocalMD} or {@link #loadRemoteMD}. */
    public int unloadMD(long md) {
        return guard(() -> metadata.unload(md));
    }

    // ------------------------------------------------------------------ connections

    /** This engine's connection info: {@code out[0]}. Stable for the backend's life. */
    public int getConnInfo(byte[][] out) {
        return guard(() -> {
            requireOut(out);
            out[0] = engine.connInfo();
            return NixlStatus.SUCCESS;
        });
    }

    /** Makes a peer known. Never blocks; does not connect. */
    public int loadRemoteConnInfo(String remoteAgent, byte[] connInfo) {
        return guard(() -> {
            requireAgent(remoteAgent);
            if (connInfo == null) {
                throw new TransferException(Code.INVALID_PARAM, "no connection info");
            }
            if (remoteAgent.equals(engine.name())) {
                throw new TransferException(Code.INVALID_PARAM, "connection info of this agent itself");
            }
            engine.loadPeer(remoteAgent, connInfo);
            return NixlStatus.SUCCESS;
        });
    }

    /** Starts connecting to a loaded peer. Never blocks. Connecting to this agent itself is a no-op. */
    public int connect(String remoteAgent) {
        return guard(() -> {
            requireAgent(remoteAgent);
            if (!remoteAgent.equals(engine.name())) {
                engine.connect(remoteAgent);
            }
            return NixlStatus.SUCCESS;
        });
    }

    /** Closes the connection to a peer; its transfers in flight fail with REMOTE_DISCONNECT. */
    public int disconnect(String remoteAgent) {
        return guard(() -> {
            requireAgent(remoteAgent);
            if (!remoteAgent.equals(engine.name())) {
                engine.disconnect(remoteAgent);
            }
            return NixlStatus.SUCCESS;
        });
    }

    // ------------------------------------------------------------------ transfers

    /**
     * Prepares a transfer: checks the lists and makes a handle ({@code handleOut[0]}) that
     * {@link #postXfer} posts as often as wanted. Nothing moves yet.
     *
     * <p>{@code local*} describe memory of this agent, each range inside the registration
     * {@code localMd[i]}; {@code remote*} the peer's, each inside {@code remoteMd[i]} (from
     * {@link #loadRemoteMD} of {@code remoteAgent}, or from {@link #loadLocalMD} when
     * {@code remoteAgent} is this agent). Descriptor i of one list pairs with descriptor i of the other.
     *
     * @return SUCCESS; INVALID_PARAM for a bad operation or malformed arrays; MISMATCH for lists or
     *         pairs of different lengths; NOT_SUPPORTED for a memory type other than DRAM/VRAM;
     *         NOT_FOUND for an unknown metadata id or peer; NOT_ALLOWED for a range outside its metadata
     */
    public int prepXfer(int op, int localMem, long[] localAddr, long[] localLen, int[] localDev, long[] localMd,
                        int remoteMem, long[] remoteAddr, long[] remoteLen, int[] remoteDev, long[] remoteMd,
                        String remoteAgent, long[] handleOut) {
        return guard(() -> transfers.prepare(op, localMem, localAddr, localLen, localDev, localMd,
                remoteMem, remoteAddr, remoteLen, remoteDev, remoteMd, remoteAgent, handleOut));
    }

    /**
     * Posts a prepared transfer. Never blocks.
     *
     * @param notif the notification to deliver to the target agent once every byte landed, or
     *              {@code null} for none (an empty array is a notification with an empty message)
     * @return IN_PROG, SUCCESS (it already finished), REPOST_ACTIVE if the handle's previous post is
     *         still in flight, NOT_FOUND for an unknown handle, or the error that stopped it
     */
    public int postXfer(long handle, byte[] notif) {
        // postXfer, checkXfer and getNotifs are what a host polls with: no lambda per call (see guard)
        try {
            requireOpen();
            int status = transfers.post(handle, notif);
            progress();
            return status;
        } catch (RuntimeException e) {
            return status(e);
        }
    }

    /**
     * The state of a handle's last post: IN_PROG, SUCCESS, its error, or NOT_POSTED if never posted. Returns
     * at once, except that a host polling the handle in a loop on contended CPUs waits here for the engine,
     * at most the poll wait ({@link PollWait}).
     */
    public int checkXfer(long handle) {
        try {
            requireOpen();
            progress();
            return transfers.check(handle);
        } catch (RuntimeException e) {
            return status(e);
        }
    }

    /**
     * Frees a handle. Never blocks: a transfer still in flight is aborted in the background (see the
     * class comment for the memory it still uses). SUCCESS, or NOT_FOUND for an unknown handle.
     */
    public int releaseReqH(long handle) {
        return guard(() -> transfers.release(handle));
    }

    /**
     * Estimates how long a prepared transfer takes: {@code out[0]} microseconds, {@code out[1]} the
     * error margin in microseconds, {@code out[2]} the method ({@link #COST_ANALYTICAL_BACKEND}).
     */
    public int estimateXferCost(long handle, long[] out) {
        return guard(() -> transfers.estimate(handle, out));
    }

    // ------------------------------------------------------------------ notifications

    /**
     * Takes every notification received since the last call, oldest first, into {@code out[0]} as one
     * packed array (see {@link #packNotifications}). Returns at once, except that a host polling in a loop on
     * contended CPUs waits here for a notification or another event, at most the poll wait ({@link PollWait}).
     */
    public int getNotifs(byte[][] out) {
        try {
            requireOpen();
            requireOut(out);
            progress();
            long seen = pollWait.events();
            List<Notification> taken = drain();
            if (taken.isEmpty() && pollWait.afterEmpty(notifLoop, seen)) {
                taken = drain();
            }
            if (!taken.isEmpty()) {
                notifLoop.reset();
            }
            out[0] = packNotifications(taken);
            return NixlStatus.SUCCESS;
        } catch (RuntimeException e) {
            return status(e);
        }
    }

    private List<Notification> drain() {
        Notification n = notifications.poll();
        if (n == null) {
            return List.of();
        }
        List<Notification> taken = new ArrayList<>();
        do {
            taken.add(n);
            n = notifications.poll();
        } while (n != null);
        return taken;
    }

    /** Sends a notification not bound to a transfer; no ordering with transfers. */
    public int genNotif(String remoteAgent, byte[] message) {
        return guard(() -> {
            requireAgent(remoteAgent);
            if (message == null) {
                throw new TransferException(Code.INVALID_PARAM, "no message");
            }
            engine.session(remoteAgent).notify(message);
            return NixlStatus.SUCCESS;
        });
    }

    /** Packs notifications for the C side ({@link NotificationCodec}); an empty list packs to one shared array. */
    public static byte[] packNotifications(List<Notification> notifications) {
        return NotificationCodec.pack(notifications);
    }

    /** The inverse of {@link #packNotifications}. */
    public static List<Notification> unpackNotifications(byte[] packed) {
        return NotificationCodec.unpack(packed);
    }

    // ------------------------------------------------------------------ lifecycle

    /**
     * Releases every handle (aborting transfers in flight), deregisters what is still registered,
     * then closes the resources given at construction. Idempotent. May block as long as closing the
     * engine does.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        transfers.releaseAll();
        metadata.deregisterAll();
        try {
            resources.close();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "closing the engine of NIXL backend " + engine.name() + " failed", e);
        }
    }

    // ------------------------------------------------------------------ internals

    private interface Body {
        int run();
    }

    /**
     * Runs a call's body, turning what it throws into a NIXL status. The calls hosts poll (postXfer,
     * checkXfer, getNotifs) spell it out instead: a capturing lambda is an object per call.
     */
    private int guard(Body body) {
        try {
            requireOpen();
            return body.run();
        } catch (RuntimeException e) {
            return status(e);
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new TransferException(Code.CANCELED, "backend closed");
        }
    }

    private int status(RuntimeException e) {
        if (e instanceof TransferException t) {
            LOG.log(System.Logger.Level.DEBUG, "NIXL backend call failed", t);
            return NixlStatus.of(t.code());
        }
        // Not a TransferException: a bug somewhere; NIXL only gets a number, so say more here.
        LOG.log(System.Logger.Level.WARNING, "unexpected failure in NIXL backend " + engine.name(), e);
        return NixlStatus.ERR_UNKNOWN;
    }
}
