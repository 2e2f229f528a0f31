package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link NetTransport} over kernel TCP that is as strict as TCPX: 16 request slots per comm, FIFO
 * {@code test} and {@code consumed}, tags ignored, {@code connect}/{@code accept} that return
 * {@code null} until the peer is there, 128-byte handles with a nonce, per-comm registrations with
 * the 4 KiB rule for CUDA memory, and (devmem mode, the default) receives that land in permuted
 * 4 KiB bounce pages and must be unpacked and consumed. Who moves the bytes is
 * {@link LoopbackConfig#ioThreads()}: with N > 0, the transport's own I/O threads move every byte and mark
 * every request done, {@code isend} and {@code irecv} only hand a request to them and {@code test} only
 * reads what they marked; with 0, the thread that drives a comm moves its bytes inside {@code isend},
 * {@code irecv} and {@code test} and in the handlers it registered with the driver's selector
 * ({@link Capability#DRIVER_SOCKETS}). Either way a request is reported done by a {@code test}, never by
 * the call that posted it.
 *
 * <p>With a {@link DeviceMemory} that has devices, bounce pages are pinned host memory mapped for the
 * GPU (the CUDA unpack kernel reads them as it reads TCPX's) and CUDA sources are staged into pinned
 * buffers with {@link DeviceMemory#copyAsync} before they are written to the socket.
 *
 * <p>Nothing happens at construction: I/O threads, if any, start with the first {@code listen} or
 * {@code connect}. Close the transport to stop them.
 *
 * <p>The request path ({@code isend}, {@code irecv}, {@code test}, {@code consumed}) is this class's
 * own; connection set-up belongs to a {@link Connector}, registration checks to a {@link Registrar},
 * and the loops (I/O threads or the drivers' selectors) and the closed state to {@link IoLoops}. What comms need from their transport
 * (settings, memory, the progress wake-ups) they get from a {@link CommSupport}, never from this class:
 * the arrows between the classes of this package go one way. Comms that a connect or accept hands out
 * are tracked here, so that {@code close} closes them.
 *
 * <p>Thread-safe across comms; each comm is driven by one thread at a time (the SPI's rule).
 */
public final class LoopbackTransport implements NetTransport {

    private final LoopbackConfig config;
    private final DeviceMemory deviceMemory;
    private final boolean gpu;
    private final long completionDelayNanos;
    private final ProgressWakes wakes = new ProgressWakes();
    private final CommSupport support;
    private final IoLoops loops;
    private final Connector connector;
    private final Registrar registrar;
    private final Set<LoopbackComm> comms = ConcurrentHashMap.newKeySet();

    /** A host-memory-only transport (CUDA registrations fail with NOT_SUPPORTED). */
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
        this.support = new CommSupport(config, deviceMemory, gpu);
        this.loops = new IoLoops(config.ioThreads(), wakes, System.getLogger(LoopbackTransport.class.getName()));
        this.connector = new Connector(support, loops);
        this.registrar = new Registrar(deviceMemory, gpu);
    }

    @Override
    public String name() {
        return "loopback";
    }

    @Override
    public Set<Capability> capabilities() {
        EnumSet<Capability> caps = EnumSet.of(Capability.FAULT_INJECTION);
        if (gpu) {
            caps.add(Capability.CUDA_MEMORY);
        }
        if (config.devmem() || gpu) {
            caps.add(Capability.DEVMEM_RECEIVE);
        }
        if (announcesProgress()) {
            caps.add(config.ioThreads() > 0 ? Capability.PROGRESS_WAKEUPS : Capability.DRIVER_SOCKETS);
        }
        return caps;
    }

    @Override
    public int deviceCount() {
        return config.devices();
    }

    @Override
    public DeviceProperties properties(int device) {
        LoopbackListener.checkDevice(device, config.devices());
        Set<PtrType> ptr = gpu ? EnumSet.of(PtrType.HOST, PtrType.CUDA) : EnumSet.of(PtrType.HOST);
        int type = config.devmem() || gpu ? DeviceProperties.NET_DEVICE_UNPACK : 0;
        return new DeviceProperties("loopback" + device, "", device, ptr, 100_000, 1, 0f, 65536, 1, type, 7);
    }

    @Override
    public Runnable wakeOnProgress(Runnable wake) {
        Objects.requireNonNull(wake, "wake");
        if (config.ioThreads() == 0) {
            throw new TransferException(Code.NOT_SUPPORTED, "a loopback transport without I/O threads moves bytes"
                    + " only inside its caller's calls: block on the DriverSelector given to listen and connect");
        }
        if (!announcesProgress()) {
            throw new TransferException(Code.NOT_SUPPORTED, "a loopback transport with injected completion delays"
                    + " does not announce progress: poll it while requests are out");
        }
        return wakes.add(wake);
    }

    /**
     * Every completion, failure and connect or accept that became ready signals the wake-ups (with I/O
     * threads) or is a socket in the driver's selector (without); only injected completion delays
     * ({@link LoopbackConfig.Faults#completionDelay()}) end unannounced, and, without I/O threads, the
     * staging copy of a CUDA source, which no socket announces: a transport with either is polled.
     */
    private boolean announcesProgress() {
        return config.faults().completionDelay().isZero() && (config.ioThreads() > 0 || !gpu);
    }

    @Override
    public Listener listen(int device) {
        return listen(device, null);
    }

    @Override
    public Listener listen(int device, DriverSelector driver) {
        checkOpen();
        return connector.listen(device, driver);
    }

    @Override
    public SendComm connect(int device, byte[] handle) {
        return connect(device, handle, null);
    }

    @Override
    public SendComm connect(int device, byte[] handle, DriverSelector driver) {
        checkOpen();
        LoopbackSendComm c = connector.connect(device, handle, driver);
        if (c != null) {
            comms.add(c);
        }
        return c;
    }

    @Override
    public RecvComm accept(Listener listener) {
        checkOpen();
        LoopbackRecvComm c = connector.accept(listener);
        if (c != null) {
            comms.add(c);
        }
        return c;
    }

    @Override
    public MemoryRegistration register(Comm comm, long address, long size, PtrType type) {
        return registrar.register(comm(comm), address, size, type);
    }

    @Override
    public void deregister(Comm comm, MemoryRegistration registration) {
        Registrar.deregister(comm(comm), registration);
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        if (!(comm instanceof LoopbackSendComm c) || c.support != support) {
            throw new TransferException(Code.INVALID_PARAM, "not a send comm of this transport: " + comm);
        }
        c.checkUsable();
        LoopbackRegistration r = Registrar.covering(c, registration, address, size);
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
        if (!(comm instanceof LoopbackRecvComm c) || c.support != support) {
            throw new TransferException(Code.INVALID_PARAM, "not a receive comm of this transport: " + comm);
        }
        c.checkUsable();
        LoopbackRegistration r = Registrar.covering(c, registration, address, size);
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
        c.loop.posted(c);
    }

    @Override
    public boolean test(NetRequest request) {
        LoopbackRequest q = request(request);
        LoopbackComm c = (LoopbackComm) q.comm;
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
            c.loop.drive(c);
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
        if (!(comm instanceof LoopbackRecvComm c) || c.support != support) {
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
        if (!(comm instanceof LoopbackSendComm c) || c.support != support) {
            throw new TransferException(Code.INVALID_PARAM, "not a send comm of this transport: " + comm);
        }
        c.close();
        comms.remove(c);
    }

    @Override
    public void closeRecv(RecvComm comm) {
        if (!(comm instanceof LoopbackRecvComm c) || c.support != support) {
            throw new TransferException(Code.INVALID_PARAM, "not a receive comm of this transport: " + comm);
        }
        c.close();
        comms.remove(c);
    }

    @Override
    public void closeListen(Listener listener) {
        connector.closeListen(listener);
    }

    @Override
    public void close() {
        if (!loops.close()) {
            return;
        }
        for (LoopbackComm c : comms) {
            c.close();
        }
        comms.clear();
        connector.close();
        loops.shutdown();
    }

    private void checkOpen() {
        if (loops.isClosed()) {
            throw new TransferException(Code.INVALID_PARAM, "transport is closed");
        }
    }

    private LoopbackComm comm(Comm comm) {
        if (!(comm instanceof LoopbackComm c) || c.support != support) {
            throw new TransferException(Code.INVALID_PARAM, "not a comm of this transport: " + comm);
        }
        return c;
    }

    private LoopbackRequest request(NetRequest request) {
        if (!(request instanceof LoopbackRequest q) || !(q.comm instanceof LoopbackComm c) || c.support != support) {
            throw new TransferException(Code.INVALID_PARAM, "not a request of this transport: " + request);
        }
        return q;
    }
}
