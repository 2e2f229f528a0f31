package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link NetTransport} over kernel TCP that is as strict as TCPX: 16 request slots per comm, FIFO
 * {@code test} and {@code consumed}, tags ignored, {@code connect}/{@code accept} that return
 * {@code null} until the peer is there, 128-byte handles with a nonce, per-comm registrations with
 * the 4 KiB rule for CUDA memory, and (devmem mode, the default) receives that land in permuted
 * 4 KiB bounce pages and must be unpacked and consumed. Every request is moved by the transport's
 * own I/O threads ({@link LoopbackConfig#ioThreads()}), so nothing completes on the caller's thread.
 *
 * <p>With a {@link DeviceMemory} that has devices, bounce pages are pinned host memory mapped for the
 * GPU (the CUDA unpack kernel reads them as it reads TCPX's) and CUDA sources are staged into pinned
 * buffers with {@link DeviceMemory#copyAsync} before they are written to the socket.
 *
 * <p>Nothing happens at construction: I/O threads start with the first {@code listen} or
 * {@code connect}. Close the transport to stop them.
 *
 * <p>Thread-safe across comms; each comm is driven by one thread at a time (the SPI's rule).
 */
public final class LoopbackTransport implements NetTransport {

    private static final System.Logger LOG = System.getLogger(LoopbackTransport.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    private final LoopbackConfig config;
    private final DeviceMemory deviceMemory;
    private final boolean gpu;
    private final long completionDelayNanos;
    private final Set<LoopbackComm> comms = ConcurrentHashMap.newKeySet();
    private final Set<LoopbackListener> listeners = ConcurrentHashMap.newKeySet();
    private final Map<ByteBuffer, PendingConnect> connecting = new ConcurrentHashMap<>();
    private volatile List<IoLoop> loops;
    private int nextLoop;
    private volatile boolean closed;
    /** Engines to wake on progress; copy-on-write so that signalling allocates nothing. */
    private volatile Runnable[] wakes = new Runnable[0];

    /** A host-memory-only transport (CUDA registrations fail unless {@code cudaAsHost}). */
    public LoopbackTransport(LoopbackConfig config) {
        this(config, null);
    }

    /**
     * @param deviceMemory GPU memory services for pinned bounce pages and staging of CUDA sources;
     *                     {@code null} or one without devices for a host-only transport
     */
    public LoopbackTransport(LoopbackConfig config, DeviceMemory deviceMemory) {
        this.config = Objects.requireNonNull(config, "config");
        this.deviceMemory = deviceMemory;
        this.gpu = deviceMemory != null && deviceMemory.hasDevices();
        this.completionDelayNanos = config.faults().completionDelay().toNanos();
    }

    public LoopbackConfig config() {
        return config;
    }

    DeviceMemory deviceMemory() {
        return deviceMemory;
    }

    @Override
    public String name() {
        return "loopback";
    }

    @Override
    public Set<Capability> capabilities() {
        EnumSet<Capability> caps = EnumSet.of(Capability.FAULT_INJECTION);
        if (cudaSupported()) {
            caps.add(Capability.CUDA_MEMORY);
        }
        if (config.devmem() || gpu) {
            caps.add(Capability.DEVMEM_RECEIVE);
        }
        return caps;
    }

    private boolean cudaSupported() {
        return gpu || config.cudaAsHost();
    }

    @Override
    public int deviceCount() {
        return config.devices();
    }

    @Override
    public DeviceProperties properties(int device) {
        LoopbackListener.checkDevice(device, config.devices());
        Set<PtrType> ptr = cudaSupported() ? EnumSet.of(PtrType.HOST, PtrType.CUDA) : EnumSet.of(PtrType.HOST);
        int type = config.devmem() || cudaSupported() ? DeviceProperties.NET_DEVICE_UNPACK : 0;
        return new DeviceProperties("loopback" + device, "", device, ptr, 100_000, 1, 0f, 65536, 1, type, 7);
    }

    @Override
    public synchronized Runnable wakeOnProgress(Runnable wake) {
        Objects.requireNonNull(wake, "wake");
        Runnable[] next = Arrays.copyOf(wakes, wakes.length + 1);
        next[wakes.length] = wake;
        wakes = next;
        return () -> removeWake(wake);
    }

    private synchronized void removeWake(Runnable wake) {
        List<Runnable> rest = new ArrayList<>(Arrays.asList(wakes));
        rest.remove(wake);
        wakes = rest.toArray(new Runnable[0]);
    }

    /** Any thread: a request completed, a comm failed, or a connect or accept became ready. */
    void signalProgress() {
        for (Runnable w : wakes) {
            w.run();
        }
    }

    @Override
    public Listener listen(int device) {
        checkOpen();
        LoopbackListener.checkDevice(device, config.devices());
        InetAddress host;
        try {
            host = InetAddress.getByName(config.bindHost());
        } catch (UnknownHostException e) {
            throw new TransferException(Code.INVALID_PARAM, "bindHost " + config.bindHost() + " does not resolve", e);
        }
        ServerSocketChannel server = null;
        try {
            server = ServerSocketChannel.open();
            server.configureBlocking(false);
            server.bind(new InetSocketAddress(host, 0), 64);
            InetSocketAddress local = (InetSocketAddress) server.getLocalAddress();
            byte[] nonce = new byte[HandleCodec.NONCE_BYTES];
            RANDOM.nextBytes(nonce);
            byte[] handle = HandleCodec.encode(local, config.socketsPerComm(), device, nonce);
            if (config.faults().corruptHandle()) {
                handle = HandleCodec.corrupt(handle);
            }
            IoLoop loop = nextLoop();
            LoopbackListener l = new LoopbackListener(this, loop, device, server, nonce, handle);
            listeners.add(l);
            loop.execute(l::register);
            return l;
        } catch (IOException e) {
            if (server != null) {
                try {
                    server.close();
                } catch (IOException ignored) {
                    // reporting the bind failure matters more
                }
            }
            throw new TransferException(Code.BACKEND, "cannot listen on " + config.bindHost() + ": " + e, e);
        }
    }

    @Override
    public SendComm connect(int device, byte[] handle) {
        checkOpen();
        LoopbackListener.checkDevice(device, config.devices());
        HandleCodec.Handle decoded = HandleCodec.decode(handle);
        ByteBuffer key = ByteBuffer.wrap(handle.clone());
        PendingConnect p = connecting.get(key);
        if (p == null) {
            p = new PendingConnect(this, nextLoop(), decoded, RANDOM.nextLong());
            connecting.put(key, p);
            PendingConnect started = p;
            p.loopExecute(started::start);
            return null;
        }
        TransferException f = p.failure;
        if (f != null) {
            connecting.remove(key);
            throw new TransferException(f.code(), p.failureMessage, f);
        }
        LoopbackSendComm c = p.comm;
        if (c == null) {
            return null;
        }
        connecting.remove(key);
        comms.add(c);
        return c;
    }

    @Override
    public RecvComm accept(Listener listener) {
        checkOpen();
        LoopbackListener l = listener(listener);
        if (l.closed) {
            throw new TransferException(Code.INVALID_PARAM, "listener is closed");
        }
        if (l.yielded) {
            // as TCPX, whose accept frees its state on success: a second accept would double-free
            throw new TransferException(Code.INVALID_PARAM, "listener already yielded its comm: a listener yields exactly one");
        }
        LoopbackRecvComm c = l.poll();
        if (c != null) {
            l.yielded = true;
            comms.add(c);
        }
        return c;
    }

    @Override
    public MemoryRegistration register(Comm comm, long address, long size, PtrType type) {
        LoopbackComm c = comm(comm);
        if (c.closed) {
            throw new TransferException(Code.INVALID_PARAM, "comm is closed");
        }
        Objects.requireNonNull(type, "type");
        if (size < 0 || (address == 0 && size > 0)) {
            throw new TransferException(Code.INVALID_PARAM, "bad range 0x" + Long.toHexString(address) + "+" + size);
        }
        switch (type) {
            case HOST:
                break;
            case CUDA:
                if (!cudaSupported()) {
                    throw new TransferException(Code.NOT_SUPPORTED, "CUDA memory needs a DeviceMemory with devices"
                            + " (the cuda-unpack module on a GPU host) or LoopbackConfig.cudaAsHost");
                }
                // TCPX registers CUDA memory as a dma-buf, which works on whole 4 KiB pages only
                if (size == 0 || address % CUDA_ALIGNMENT != 0 || size % CUDA_ALIGNMENT != 0) {
                    throw new TransferException(Code.INVALID_PARAM, "CUDA registrations must be 4 KiB aligned in"
                            + " start and size: 0x" + Long.toHexString(address) + "+" + size);
                }
                break;
            default:
                throw new TransferException(Code.NOT_SUPPORTED, type + " registrations are not supported");
        }
        return new LoopbackRegistration(c, address, size, type, deviceOf(address, size, type));
    }

    /**
     * The GPU that owns a CUDA registration, so that its staging copies run there (each process may
     * see several GPUs); once per registration, not per send.
     */
    private int deviceOf(long address, long size, PtrType type) {
        if (!gpu || type != PtrType.CUDA) {
            return 0;
        }
        MemoryDescriptor range = deviceMemory.allocationRange(address, size);
        return range.kind() == MemoryKind.VRAM ? range.device() : 0;
    }

    @Override
    public void deregister(Comm comm, MemoryRegistration registration) {
        LoopbackComm c = comm(comm);
        LoopbackRegistration r = registration(c, registration);
        r.valid = false;
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        if (!(comm instanceof LoopbackSendComm c) || c.transport != this) {
            throw new TransferException(Code.INVALID_PARAM, "not a send comm of this transport: " + comm);
        }
        c.checkUsable();
        LoopbackRegistration r = covering(c, registration, address, size);
        if (c.inUse() == MAX_REQUESTS) {
            return null;
        }
        LoopbackRequest q = post(c, address, size);
        q.source = address;
        q.stagingTicket = 0;
        if (gpu && r.type() == PtrType.CUDA) {
            c.stage(q, deviceMemory, r.device);
        }
        publish(c, q);
        return q;
    }

    @Override
    public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
        if (!(comm instanceof LoopbackRecvComm c) || c.transport != this) {
            throw new TransferException(Code.INVALID_PARAM, "not a receive comm of this transport: " + comm);
        }
        c.checkUsable();
        LoopbackRegistration r = covering(c, registration, address, size);
        boolean bounce = config.devmem() || (gpu && r.type() == PtrType.CUDA);
        if (bounce && size > NetRequest.MAX_FRAGMENTS * BouncePool.PAGE) {
            throw new TransferException(Code.INVALID_PARAM, "a receive holds at most " + NetRequest.MAX_FRAGMENTS
                    + " bounce pages (8 MiB), got " + size + " bytes");
        }
        if (c.inUse() == MAX_REQUESTS) {
            return null;
        }
        LoopbackRequest q = c.request(c.posted);
        q.bounce = bounce;
        if (bounce && !c.assignPages(q, size)) {
            return null; // pool exhausted until earlier receives are consumed
        }
        post(c, address, size);
        publish(c, q);
        return q;
    }

    private LoopbackRequest post(LoopbackComm c, long address, int size) {
        LoopbackRequest q = c.request(c.posted);
        q.seq = c.posted;
        q.address = address;
        q.size = size;
        q.received = 0;
        q.fragments = 0;
        q.stripesLeft = c.streams.length;
        q.done = false;
        q.state = LoopbackRequest.POSTED;
        return q;
    }

    private static void publish(LoopbackComm c, LoopbackRequest q) {
        c.posted = q.seq + 1;
        c.loop.wake();
    }

    @Override
    public boolean test(NetRequest request) {
        LoopbackRequest q = request(request);
        LoopbackComm c = q.comm;
        if (c.closed) {
            throw new TransferException(Code.INVALID_PARAM, "the request's comm is closed; its requests are void");
        }
        if (q.state == LoopbackRequest.FREE) {
            throw new TransferException(Code.INVALID_PARAM, "request is not posted (a completed send is recycled)");
        }
        if (q.state == LoopbackRequest.COMPLETED) {
            return true;
        }
        if (q.seq != c.tested) {
            throw new TransferException(Code.INVALID_PARAM, "only the oldest uncompleted request of a comm may be"
                    + " tested (FIFO, as in TCPX): request " + q.seq + ", oldest " + c.tested);
        }
        if (!q.done) {
            c.throwIfFailed();
            return false;
        }
        if (completionDelayNanos > 0 && System.nanoTime() - q.doneNanos < completionDelayNanos) {
            return false;
        }
        c.tested++;
        if (c instanceof LoopbackSendComm) {
            q.state = LoopbackRequest.FREE;
            c.released++;
        } else {
            q.state = LoopbackRequest.COMPLETED;
        }
        return true;
    }

    @Override
    public void consumed(RecvComm comm, NetRequest request) {
        if (!(comm instanceof LoopbackRecvComm c) || c.transport != this) {
            throw new TransferException(Code.INVALID_PARAM, "not a receive comm of this transport: " + comm);
        }
        LoopbackRequest q = request(request);
        if (q.comm != c) {
            throw new TransferException(Code.INVALID_PARAM, "request belongs to another comm");
        }
        if (c.closed) {
            throw new TransferException(Code.INVALID_PARAM, "comm is closed; its requests are void");
        }
        if (q.state != LoopbackRequest.COMPLETED) {
            throw new TransferException(Code.INVALID_PARAM, "a receive is consumed after it tested done");
        }
        if (q.seq != c.released) {
            throw new TransferException(Code.INVALID_PARAM, "receives are consumed oldest first (FIFO): request "
                    + q.seq + ", oldest " + c.released);
        }
        c.releasePages(q);
        q.state = LoopbackRequest.FREE;
        c.released++;
    }

    @Override
    public void closeSend(SendComm comm) {
        if (!(comm instanceof LoopbackSendComm c) || c.transport != this) {
            throw new TransferException(Code.INVALID_PARAM, "not a send comm of this transport: " + comm);
        }
        c.close();
    }

    @Override
    public void closeRecv(RecvComm comm) {
        if (!(comm instanceof LoopbackRecvComm c) || c.transport != this) {
            throw new TransferException(Code.INVALID_PARAM, "not a receive comm of this transport: " + comm);
        }
        c.close();
    }

    @Override
    public void closeListen(Listener listener) {
        LoopbackListener l = listener(listener);
        l.close();
        listeners.remove(l);
    }

    @Override
    public void close() {
        List<IoLoop> started;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            started = loops;
        }
        for (LoopbackComm c : comms) {
            c.close();
        }
        for (LoopbackListener l : listeners) {
            l.close();
        }
        listeners.clear();
        for (PendingConnect p : connecting.values()) {
            p.loopExecute(p::abandon);
        }
        connecting.clear();
        if (started != null) {
            for (IoLoop loop : started) {
                loop.shutdown();
            }
        }
    }

    // ---- internals shared with the comms

    void forget(LoopbackComm comm) {
        comms.remove(comm);
    }

    /** Bounce pages and fragment tables: pinned and GPU-mapped on GPU hosts, plain native memory otherwise. */
    MemoryDescriptor allocateHost(long size) {
        if (gpu) {
            return deviceMemory.allocatePinned(size);
        }
        return MemoryDescriptor.dram(NativeMemory.allocate(size, NativeMemory.PAGE), size);
    }

    void freeHost(MemoryDescriptor memory) {
        if (gpu) {
            deviceMemory.free(memory);
        } else {
            NativeMemory.free(memory.address());
        }
    }

    static void configure(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    /**
     * Runs one turn of every I/O loop on the calling thread (see {@link IoLoop#drive()}), if
     * {@link LoopbackConfig#callerDrives()}; else nothing (the I/O threads do the socket work).
     */
    @Override
    public int drive() {
        List<IoLoop> started = loops;
        if (!config.callerDrives() || started == null) {
            return 0;
        }
        int ready = 0;
        for (IoLoop loop : started) {
            ready += loop.drive();
        }
        return ready;
    }

    /** Turns callers ran on the I/O loops so far (for tests). */
    long callerTurns() {
        List<IoLoop> started = loops;
        long n = 0;
        if (started != null) {
            for (IoLoop loop : started) {
                n += loop.callerTurns();
            }
        }
        return n;
    }

    private synchronized IoLoop nextLoop() {
        if (closed) {
            throw new TransferException(Code.INVALID_PARAM, "transport is closed");
        }
        if (loops == null) {
            List<IoLoop> l = new ArrayList<>(config.ioThreads());
            for (int i = 0; i < config.ioThreads(); i++) {
                l.add(new IoLoop("tcpx4j-loopback-io-" + i));
            }
            loops = l;
            LOG.log(System.Logger.Level.DEBUG, "loopback transport started " + l.size() + " I/O threads");
        }
        IoLoop loop = loops.get(nextLoop);
        nextLoop = (nextLoop + 1) % loops.size();
        return loop;
    }

    private void checkOpen() {
        if (closed) {
            throw new TransferException(Code.INVALID_PARAM, "transport is closed");
        }
    }

    private LoopbackComm comm(Comm comm) {
        if (!(comm instanceof LoopbackComm c) || c.transport != this) {
            throw new TransferException(Code.INVALID_PARAM, "not a comm of this transport: " + comm);
        }
        return c;
    }

    private LoopbackListener listener(Listener listener) {
        if (!(listener instanceof LoopbackListener l) || !listeners.contains(l)) {
            throw new TransferException(Code.INVALID_PARAM, "not an open listener of this transport: " + listener);
        }
        return l;
    }

    private LoopbackRequest request(NetRequest request) {
        if (!(request instanceof LoopbackRequest q) || q.comm.transport != this) {
            throw new TransferException(Code.INVALID_PARAM, "not a request of this transport: " + request);
        }
        return q;
    }

    private static LoopbackRegistration registration(LoopbackComm c, MemoryRegistration registration) {
        if (!(registration instanceof LoopbackRegistration r) || r.comm != c) {
            throw new TransferException(Code.INVALID_PARAM,
                    "registration was not made on this comm (registrations are per comm): " + registration);
        }
        if (!r.valid) {
            throw new TransferException(Code.INVALID_PARAM, "registration was deregistered: " + r);
        }
        return r;
    }

    private static LoopbackRegistration covering(LoopbackComm c, MemoryRegistration registration, long address,
                                                 int size) {
        LoopbackRegistration r = registration(c, registration);
        if (size < 0 || !r.covers(address, size)) {
            throw new TransferException(Code.INVALID_PARAM, "[0x" + Long.toHexString(address) + ", +" + size
                    + ") is outside " + r);
        }
        return r;
    }
}
