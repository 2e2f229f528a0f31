package io.tcpx4j.domain.testing;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test double of {@link NetTransport}: in-process, no sockets, and as strict as TCPX, so that an
 * engine that passes its tests over this double does not trip over TCPX's rules later. Make
 * instances with {@link InMemoryFabric#newTransport(Config)}, one per engine.
 *
 * <p>What it enforces (each a TransferException with the code named, or a {@code null} return):
 * <ul>
 *   <li>Handles are 128 bytes (magic, fabric, listener id, random nonce); a handle that is corrupt in
 *       any byte, from another fabric, or of a closed listener: INVALID_PARAM. {@code connect}
 *       answers {@code null} ("not yet") on the first {@link Config#connectNotYetCalls()} calls for
 *       a handle (at least one) and the SendComm on the next; the first call already queues the
 *       connection, so {@code accept} answers {@code null} until then and the RecvComm afterwards.
 *       A listener yields exactly one comm, as TCPX's (which frees its accept state on success, so
 *       a second accept would double-free): accept after that is INVALID_PARAM.</li>
 *   <li>16 request slots per comm: a send holds one until it tested done, a receive until it was
 *       consumed; the 17th isend/irecv answers {@code null} (BUSY). So does a post on a comm whose
 *       peer side does not exist yet (not accepted, or connect not yet returned).</li>
 *   <li>Positional matching: the n-th send of a connection meets its n-th receive; tags are ignored.
 *       A send larger than its receive fails the receive's test with BACKEND (truncation) and breaks
 *       the connection (REMOTE_DISCONNECT for everything else on it), as a byte stream out of step
 *       would. A smaller send completes the receive with fewer bytes: {@link NetRequest#size()}
 *       stays the posted size (TCPX's test never reports sizes), fragments cover only the bytes
 *       sent, and {@link #receivedSize(NetRequest)} tells a test how many arrived.</li>
 *   <li>{@code test} only on the oldest request of its comm not yet reported done, else
 *       INVALID_PARAM; also INVALID_PARAM for a request already reported done, consumed or void.
 *       Data never moves inside isend/irecv: it moves in a later {@code test} (which pumps its
 *       connection) or {@link InMemoryFabric#progress()}. A send completes only once its data
 *       landed in the receiver's memory or bounce pages.</li>
 *   <li>{@code consumed} strictly oldest first (else INVALID_PARAM), and only for a receive that
 *       tested done (else INVALID_PARAM). A test that throws ends its request: its slot and pages
 *       are released and it must not be consumed.</li>
 *   <li>Registrations belong to one comm; posting with another comm's, a deregistered one, or a
 *       range outside it: INVALID_PARAM. CUDA: NOT_SUPPORTED without {@link Capability#CUDA_MEMORY},
 *       else start and size 4 KiB aligned (INVALID_PARAM). DMABUF: NOT_SUPPORTED (TCPX has no
 *       regMrDmaBuf). Deregistering while requests using it are unreleased on a healthy connection:
 *       INVALID_PARAM. There is no GPU here: a "CUDA" address is read and written as host memory,
 *       so tests fake VRAM with aligned host allocations.</li>
 *   <li>Devmem mode ({@link Capability#DEVMEM_RECEIVE}, on by default; decided by the receiving
 *       transport): every receive, host memory included, lands in 4-KiB pages taken at random from
 *       the recv comm's bounce pool, with a fragment table of {@code {u32 srcOff, u32 len, u64 dstOff}}
 *       records (srcOff from {@code bounceBase()}) that cover {@code [0, bytes sent)} once, in 4 KiB
 *       pieces (the last shorter), listed in random order; the destination itself is never written.
 *       Pages and table are valid until consumed, then poisoned. A receive waits (not an error) while
 *       the pool lacks pages for it; a receive posted larger than 2048 pages (TCPX's limit) or the
 *       pool: INVALID_PARAM. Without devmem, data lands in place and {@code fragmentCount()} is 0.
 *       Fragment accessors throw INVALID_PARAM outside "tested done .. consumed".</li>
 *   <li>Closing a send comm fails the peer's receives not yet reported done (REMOTE_DISCONNECT,
 *       even if their data landed: TCPX does the same); closing a recv comm fails the peer's sends
 *       whose data did not land. Posting towards a closed or broken peer throws REMOTE_DISCONNECT.
 *       Using a closed comm, listener or transport: INVALID_PARAM.</li>
 * </ul>
 *
 * <p>Faults ({@link InMemoryFabric#breakConnection}, {@link InMemoryFabric#dropAfterBytes}) and
 * counters for leak and window assertions ({@link #outstanding}, {@link #maxOutstandingSends()},
 * {@link #commsAlive()}, {@link #registrationsAlive()}, ...) are methods of the fabric and of this
 * class beyond the SPI.
 *
 * <p><b>Thread-safe</b> beyond what the SPI asks: one comm may be driven from one thread at a time
 * as the SPI says, while other comms of this transport and the peer side of each connection run on
 * other threads (each connection is guarded by its own monitor, shared by its two sides).
 */
public final class InMemoryNetTransportDouble implements NetTransport {

    /**
     * Settings of one transport.
     *
     * @param capabilities           capabilities declared and honoured (see the class doc)
     * @param devices                network devices reported
     * @param connectNotYetCalls     connect calls per handle that answer {@code null} before the
     *                               SendComm, at least 1 (TCPX's connect is asynchronous too)
     * @param bouncePagesPerRecvComm devmem bounce pages per recv comm (4 KiB each, reserved on the
     *                               first devmem receive); receives wait while too few are free
     */
    public record Config(Set<Capability> capabilities, int devices, int connectNotYetCalls,
                         int bouncePagesPerRecvComm) {

        /** Default bounce pool: 16 MiB, two receives of TCPX's 8 MiB maximum or 32 of 512 KiB. */
        public static final int DEFAULT_BOUNCE_PAGES = 4096;

        public Config {
            capabilities = Set.copyOf(capabilities);
            if (capabilities.contains(Capability.PROGRESS_WAKEUPS)) {
                // its requests complete inside test(), on the caller's thread: there is nothing to announce
                throw new IllegalArgumentException("the in-memory double cannot declare " + Capability.PROGRESS_WAKEUPS);
            }
            if (devices < 1 || connectNotYetCalls < 1 || bouncePagesPerRecvComm < 1) {
                throw new IllegalArgumentException("devices, connectNotYetCalls and bouncePagesPerRecvComm must be >= 1");
            }
        }

        /**
         * Every capability it can honour (CUDA memory, devmem receives, fault injection; not progress
         * wake-ups), one device, one "not yet".
         */
        public static Config defaults() {
            return new Config(EnumSet.complementOf(EnumSet.of(Capability.PROGRESS_WAKEUPS)), 1, 1,
                    DEFAULT_BOUNCE_PAGES);
        }

        public Config withCapabilities(Capability... declared) {
            EnumSet<Capability> set = EnumSet.noneOf(Capability.class);
            set.addAll(Arrays.asList(declared));
            return new Config(set, devices, connectNotYetCalls, bouncePagesPerRecvComm);
        }

        public Config without(Capability capability) {
            EnumSet<Capability> set = EnumSet.noneOf(Capability.class);
            set.addAll(capabilities);
            set.remove(capability);
            return new Config(set, devices, connectNotYetCalls, bouncePagesPerRecvComm);
        }

        public Config withDevices(int count) {
            return new Config(capabilities, count, connectNotYetCalls, bouncePagesPerRecvComm);
        }

        public Config withConnectNotYetCalls(int calls) {
            return new Config(capabilities, devices, calls, bouncePagesPerRecvComm);
        }

        public Config withBouncePagesPerRecvComm(int pages) {
            return new Config(capabilities, devices, connectNotYetCalls, pages);
        }
    }

    private final InMemoryFabric fabric;
    private final Config config;
    private final Set<DoubleComm> comms = ConcurrentHashMap.newKeySet();
    private final Set<DoubleListener> listeners = ConcurrentHashMap.newKeySet();
    /** Connections this transport started whose connect has not returned the SendComm yet. */
    private final List<CommPair> pendingConnects = new ArrayList<>();
    private final AtomicInteger maxOutstandingSends = new AtomicInteger();
    private final AtomicInteger maxOutstandingRecvs = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Made by {@link InMemoryFabric#newTransport(Config)} only, so the fabric can count and close it. */
    InMemoryNetTransportDouble(InMemoryFabric fabric, Config config) {
        this.fabric = Objects.requireNonNull(fabric, "fabric");
        this.config = Objects.requireNonNull(config, "config");
    }

    public InMemoryFabric fabric() {
        return fabric;
    }

    public Config config() {
        return config;
    }

    boolean devmem() {
        return config.capabilities().contains(Capability.DEVMEM_RECEIVE);
    }

    // ---- NetTransport ----

    @Override
    public String name() {
        return "in-memory-double";
    }

    @Override
    public Set<Capability> capabilities() {
        return config.capabilities();
    }

    @Override
    public int deviceCount() {
        return config.devices();
    }

    @Override
    public DeviceProperties properties(int device) {
        checkDevice(device);
        Set<PtrType> ptr = config.capabilities().contains(Capability.CUDA_MEMORY)
                ? EnumSet.of(PtrType.HOST, PtrType.CUDA) : EnumSet.of(PtrType.HOST);
        boolean unpack = devmem();
        return new DeviceProperties("mem" + device, "", 0x7C9F_0000L + device, ptr, 100_000, 0, 0f,
                65_536, 1, unpack ? DeviceProperties.NET_DEVICE_UNPACK : 0, unpack ? 7 : 0);
    }

    @Override
    public Listener listen(int device) {
        checkOpen();
        checkDevice(device);
        DoubleListener listener = fabric.newListener(this, device);
        listeners.add(listener);
        return listener;
    }

    @Override
    public SendComm connect(int device, byte[] handle) {
        checkOpen();
        checkDevice(device);
        if (handle == null || handle.length != Listener.HANDLE_SIZE) {
            throw invalid("a connection handle is " + Listener.HANDLE_SIZE + " bytes, got "
                    + (handle == null ? "null" : handle.length));
        }
        synchronized (pendingConnects) {
            for (CommPair p : pendingConnects) {
                if (!p.listener.matches(handle)) {
                    continue;
                }
                synchronized (p) {
                    if (p.broken()) {
                        pendingConnects.remove(p);
                        throw new TransferException(TransferException.Code.REMOTE_DISCONNECT, p.brokenReason);
                    }
                    if (p.connectNotYetLeft > 0) {
                        p.connectNotYetLeft--;
                        return null;
                    }
                    pendingConnects.remove(p);
                    DoubleComm.Send send = new DoubleComm.Send(p, this);
                    p.send = send;
                    comms.add(send);
                    return send;
                }
            }
            CommPair p = fabric.openPair(handle);
            synchronized (p) {
                p.connectNotYetLeft = config.connectNotYetCalls() - 1;
            }
            pendingConnects.add(p);
            return null;
        }
    }

    @Override
    public RecvComm accept(Listener listener) {
        checkOpen();
        DoubleListener l = own(listener);
        if (l.yielded) {
            throw invalid(l + " already yielded its comm: a listener yields exactly one");
        }
        CommPair p = fabric.pollAccept(l);
        if (p == null) {
            return null;
        }
        DoubleComm.Recv recv = new DoubleComm.Recv(p, this);
        synchronized (p) {
            p.recv = recv;
        }
        l.yielded = true;
        comms.add(recv);
        return recv;
    }

    @Override
    public MemoryRegistration register(Comm comm, long address, long size, PtrType type) {
        checkOpen();
        DoubleComm c = own(comm);
        if (type == null || address == 0 || size <= 0) {
            throw invalid("bad registration: " + type + " 0x" + Long.toHexString(address) + " +" + size);
        }
        switch (type) {
            case DMABUF -> throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "dma-buf registration: TCPX has no regMrDmaBuf");
            case CUDA -> {
                if (!config.capabilities().contains(Capability.CUDA_MEMORY)) {
                    throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                            "CUDA memory: this transport is configured without " + Capability.CUDA_MEMORY);
                }
                if (address % CUDA_ALIGNMENT != 0 || size % CUDA_ALIGNMENT != 0) {
                    throw invalid("CUDA registrations must be " + CUDA_ALIGNMENT + "-byte aligned in start and size"
                            + " (TCPX's dma-buf path): 0x" + Long.toHexString(address) + " +" + size);
                }
            }
            case HOST -> {
            }
        }
        synchronized (c.pair) {
            checkNotClosed(c);
            DoubleRegistration registration = new DoubleRegistration(c, address, size, type);
            c.registrations.add(registration);
            return registration;
        }
    }

    @Override
    public void deregister(Comm comm, MemoryRegistration registration) {
        checkOpen();
        DoubleComm c = own(comm);
        synchronized (c.pair) {
            checkNotClosed(c);
            DoubleRegistration r = liveRegistrationOf(c, registration);
            if (r.inFlight > 0 && c.pair.healthy()) {
                throw invalid(r + " is still used by " + r.inFlight + " requests");
            }
            r.alive = false;
            c.registrations.remove(r);
        }
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        return post(own(comm), address, size, registration);
    }

    @Override
    public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
        return post(own(comm), address, size, registration);
    }

    // Tags are not passed on: TCPX ignores them, and so must anything the engine relies on.
    private NetRequest post(DoubleComm c, long address, int size, MemoryRegistration registration) {
        checkOpen();
        if (size < 0) {
            throw invalid("negative size " + size);
        }
        CommPair p = c.pair;
        synchronized (p) {
            checkNotClosed(c);
            DoubleRegistration r = liveRegistrationOf(c, registration);
            if (!r.covers(address, size)) {
                throw invalid("[0x" + Long.toHexString(address) + ", +" + size + ") is outside " + r);
            }
            if (!c.isSend() && devmem() && size > maxDevmemReceive()) {
                throw invalid("a devmem receive holds at most " + maxDevmemReceive() + " bytes (TCPX: "
                        + NetRequest.MAX_FRAGMENTS + " pages, and the configured bounce pool), posted " + size);
            }
            if (p.broken()) {
                throw new TransferException(TransferException.Code.REMOTE_DISCONNECT, p.brokenReason);
            }
            if (c.isSend() ? p.recvClosed : p.sendClosed) {
                throw new TransferException(TransferException.Code.REMOTE_DISCONNECT, "the peer closed its side");
            }
            if ((c.isSend() ? p.recv : p.send) == null || !c.slotFree()) {
                return null;
            }
            DoubleRequest request = new DoubleRequest(c, address, size, r);
            c.takeSlot();
            r.inFlight++;
            c.unreported.addLast(request);
            (c.isSend() ? p.unmatchedSends : p.unmatchedRecvs).addLast(request);
            (c.isSend() ? maxOutstandingSends : maxOutstandingRecvs).accumulateAndGet(c.outstanding, Math::max);
            return request;
        }
    }

    private int maxDevmemReceive() {
        return Math.min(NetRequest.MAX_FRAGMENTS, config.bouncePagesPerRecvComm()) * NativeMemory.PAGE;
    }

    @Override
    public boolean test(NetRequest request) {
        checkOpen();
        DoubleRequest q = own(request);
        DoubleComm c = q.comm;
        CommPair p = c.pair;
        synchronized (p) {
            checkNotClosed(c);
            if (q.state == DoubleRequest.State.REPORTED) {
                throw invalid(q + " already tested done; consume it instead");
            }
            if (q.state == DoubleRequest.State.VOID) {
                throw invalid(q + " is void (completed, consumed or failed before)");
            }
            if (c.unreported.peekFirst() != q) {
                throw invalid(q + " is not the oldest uncompleted request of its comm; test in FIFO order");
            }
            p.pump();
            TransferException failure = p.failureOf(q);
            if (failure != null) {
                c.unreported.pollFirst();
                p.release(q);
                throw failure;
            }
            if (q.state != DoubleRequest.State.LANDED) {
                return false;
            }
            c.unreported.pollFirst();
            if (c instanceof DoubleComm.Recv recv) {
                q.state = DoubleRequest.State.REPORTED;
                recv.unconsumed.addLast(q);
            } else {
                p.release(q);
            }
            return true;
        }
    }

    @Override
    public void consumed(RecvComm comm, NetRequest request) {
        checkOpen();
        DoubleComm.Recv c = (DoubleComm.Recv) own(comm);
        DoubleRequest q = own(request);
        if (q.comm != c) {
            throw invalid(q + " is not a request of " + c);
        }
        synchronized (c.pair) {
            checkNotClosed(c);
            switch (q.state) {
                case POSTED, LANDED -> throw invalid(q + " consumed before it tested done");
                case VOID -> throw invalid(q + " is void (consumed or failed before)");
                case REPORTED -> {
                }
            }
            if (c.unconsumed.peekFirst() != q) {
                throw invalid(q + " consumed out of order; consume the oldest received request first");
            }
            c.unconsumed.pollFirst();
            c.pair.release(q);
        }
    }

    @Override
    public void closeSend(SendComm comm) {
        checkOpen();
        closeComm(own(comm));
    }

    @Override
    public void closeRecv(RecvComm comm) {
        checkOpen();
        closeComm(own(comm));
    }

    private void closeComm(DoubleComm c) {
        synchronized (c.pair) {
            checkNotClosed(c);
            c.pair.closeSide(c);
        }
        comms.remove(c);
    }

    @Override
    public void closeListen(Listener listener) {
        checkOpen();
        DoubleListener l = own(listener);
        fabric.closeListener(l);
        listeners.remove(l);
    }

    /** Closes every comm and listener, abandons connects in progress, frees bounce pools. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (DoubleComm c : comms) {
            synchronized (c.pair) {
                if (!c.closed) {
                    c.pair.closeSide(c);
                }
            }
        }
        comms.clear();
        for (DoubleListener l : listeners) {
            fabric.closeListener(l);
        }
        listeners.clear();
        synchronized (pendingConnects) {
            for (CommPair p : pendingConnects) {
                synchronized (p) {
                    p.breakPair("the connecting transport closed");
                }
            }
            pendingConnects.clear();
        }
    }

    // ---- beyond the SPI: counters for tests ----

    /** Request slots {@code comm} holds now (sends until tested done, receives until consumed); 0 once closed. */
    public int outstanding(Comm comm) {
        DoubleComm c = own(comm);
        synchronized (c.pair) {
            return c.outstanding;
        }
    }

    /** The most slots {@code comm} ever held at once; kept after close. */
    public int maxOutstanding(Comm comm) {
        DoubleComm c = own(comm);
        synchronized (c.pair) {
            return c.maxOutstanding;
        }
    }

    /** The most slots any send comm of this transport ever held at once (the engine's send window). */
    public int maxOutstandingSends() {
        return maxOutstandingSends.get();
    }

    /** The most slots any recv comm of this transport ever held at once. */
    public int maxOutstandingRecvs() {
        return maxOutstandingRecvs.get();
    }

    /** Comms returned by connect/accept and not closed. */
    public int commsAlive() {
        return comms.size();
    }

    /** Listeners not closed. */
    public int listenersAlive() {
        return listeners.size();
    }

    /** Registrations not deregistered on comms not closed. */
    public int registrationsAlive() {
        int n = 0;
        for (DoubleComm c : comms) {
            synchronized (c.pair) {
                n += c.registrations.size();
            }
        }
        return n;
    }

    /** Bounce pages held by received requests of this transport's recv comms (released on consume). */
    public int bouncePagesHeld() {
        int n = 0;
        for (DoubleComm c : comms) {
            if (c instanceof DoubleComm.Recv recv) {
                synchronized (c.pair) {
                    n += recv.pool == null ? 0 : recv.pool.pagesHeld();
                }
            }
        }
        return n;
    }

    /** Open send comms, in no particular order (e.g. to check per-comm windows). */
    public List<SendComm> sendComms() {
        List<SendComm> out = new ArrayList<>();
        for (DoubleComm c : comms) {
            if (c instanceof DoubleComm.Send s) {
                out.add(s);
            }
        }
        return out;
    }

    /** Open recv comms, in no particular order. */
    public List<RecvComm> recvComms() {
        List<RecvComm> out = new ArrayList<>();
        for (DoubleComm c : comms) {
            if (c instanceof DoubleComm.Recv r) {
                out.add(r);
            }
        }
        return out;
    }

    /** Bytes that arrived in a receive that tested done and is not consumed yet (at most its posted size). */
    public int receivedSize(NetRequest request) {
        DoubleRequest q = own(request);
        synchronized (q.comm.pair) {
            if (q.comm.isSend() || q.state != DoubleRequest.State.REPORTED) {
                throw invalid(q + ": the received size is known for a receive between tested done and consumed");
            }
            return q.receivedSize;
        }
    }

    @Override
    public String toString() {
        return "InMemoryNetTransportDouble" + config.capabilities();
    }

    // ---- checks ----

    private void checkOpen() {
        if (closed.get()) {
            throw invalid("the transport is closed");
        }
    }

    private void checkDevice(int device) {
        if (device < 0 || device >= config.devices()) {
            throw invalid("no device " + device + " (devices: " + config.devices() + ")");
        }
    }

    private static void checkNotClosed(DoubleComm c) {
        if (c.closed) {
            throw invalid(c + " is closed");
        }
    }

    private static DoubleRegistration liveRegistrationOf(DoubleComm c, MemoryRegistration registration) {
        if (!(registration instanceof DoubleRegistration r) || r.comm != c || !r.alive) {
            throw invalid(registration + " is not a live registration of " + c + " (registrations are per comm)");
        }
        return r;
    }

    private DoubleComm own(Comm comm) {
        if (!(comm instanceof DoubleComm c) || c.owner != this) {
            throw invalid(comm + " is not a comm of this transport");
        }
        return c;
    }

    private DoubleListener own(Listener listener) {
        if (!(listener instanceof DoubleListener l) || l.owner != this || l.closed) {
            throw invalid(listener + " is not an open listener of this transport");
        }
        return l;
    }

    private DoubleRequest own(NetRequest request) {
        if (!(request instanceof DoubleRequest q) || q.comm.owner != this) {
            throw invalid(request + " is not a request of this transport");
        }
        return q;
    }

    private static TransferException invalid(String message) {
        return new TransferException(TransferException.Code.INVALID_PARAM, message);
    }
}
