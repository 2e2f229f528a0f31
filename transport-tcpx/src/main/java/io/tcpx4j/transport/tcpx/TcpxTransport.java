package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
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

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static io.tcpx4j.api.TransferException.Code.INVALID_PARAM;

/**
 * {@link NetTransport} over the GPUDirect-TCPX NCCL net plugin (or any plugin exporting an ncclNet
 * v5-v8 table), with what TCPX demands of its caller:
 * <ul>
 *   <li>connect and accept run on set-up threads ({@link SetupCall}) and return {@code null} until the
 *       comm is there, so a plugin whose connect or accept blocks never blocks the caller; each has a
 *       deadline ({@link TcpxOptions#setupTimeout()}). Connect keeps its progress inside the handle
 *       memory, so all calls for one handle reuse one native copy of it;</li>
 *   <li>a listener yields exactly one comm: the plugin's accept is never called again after it
 *       succeeded (TCPX would free its accept state a second time);</li>
 *   <li>accept always gets a zeroed, 16-byte aligned 32-byte device-handle buffer; for an UNPACK
 *       device the bounce-buffer base is read once per receive comm, at its first receive into CUDA
 *       memory, by copying the 24-byte unpack handle from device memory through the injected
 *       {@link DeviceMemory};</li>
 *   <li>registration is per comm; CUDA ranges must be 4 KiB aligned in start and size, on a device
 *       that declares CUDA memory: one with a PCI path (TCPX derives the NIC's PCI address from it);</li>
 *   <li>at most 16 requests per comm; a full pool, ncclInternalError from isend/irecv while requests
 *       are outstanding, and a null request are all BUSY ({@code null});</li>
 *   <li>test only on the oldest uncompleted request of its comm, and its size output is ignored (TCPX
 *       never writes it): a request reports its posted size;</li>
 *   <li>irecv always with n == 1; iflush is never called; every receive is handed back with
 *       irecvConsumed (v7+, when the plugin has it: the entry may be null), oldest first; completed
 *       receives into CUDA memory on an UNPACK device expose their fragments, read from the request's
 *       unpack slot ({@link TcpxRequestLayout});</li>
 *   <li>a comm whose test or post failed stays failed: TCPX cannot recover it but would go on handing
 *       out requests that never complete, so every later isend, irecv and test on it throws the
 *       first failure's code (REMOTE_DISCONNECT when the peer went away).</li>
 * </ul>
 * Nothing is logged per transfer. Result codes translate as described in {@link NcclResult}.
 *
 * <p>The request path ({@code isend}, {@code irecv}, {@code test}, {@code consumed}) and closing are
 * this class's own; the plugin's devices and the capabilities they give belong to
 * {@link PluginDevices}, connection set-up to a {@link Connector}, registrations to a
 * {@link Registrar}, and reading accept's device handle to {@link UnpackHandles}. Comms that a connect
 * or accept hands out are tracked here, so that {@code close} closes them.
 *
 * <p>Thread-safe across comms; each comm is driven by one thread at a time (the NetTransport
 * contract). {@link #connect} and {@link #accept} may be called from any thread.
 */
public final class TcpxTransport implements NetTransport {

    private static final System.Logger LOG = System.getLogger(TcpxTransport.class.getName());

    private final NetPlugin plugin;
    private final TcpxRequestLayout layout;
    private final PluginDevices devices;
    private final Registrar registrar;
    private final UnpackHandles unpackHandles;
    private final Connector connector;
    private final Set<TcpxComm> comms = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * Loads (once per process) and initialises the plugin the options name or discovery finds, then
     * reads its devices. Throws a TransferException saying what to fix when it cannot.
     *
     * @param deviceMemory used once per receive comm to read the unpack handle from device memory,
     *                     and to tell where bounce buffers live
     */
    public static TcpxTransport open(TcpxOptions options, DeviceMemory deviceMemory) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(deviceMemory, "deviceMemory");
        return new TcpxTransport(PluginLoader.load(options), deviceMemory, TcpxRequestLayout.X86_64_2024,
                options.setupTimeout());
    }

    TcpxTransport(NetPlugin plugin, DeviceMemory deviceMemory, TcpxRequestLayout layout, Duration setupTimeout) {
        this.plugin = Objects.requireNonNull(plugin, "plugin");
        Objects.requireNonNull(deviceMemory, "deviceMemory");
        this.layout = Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(setupTimeout, "setupTimeout");
        this.devices = new PluginDevices(plugin);
        this.registrar = new Registrar(plugin, devices);
        this.unpackHandles = new UnpackHandles(plugin, deviceMemory);
        this.connector = new Connector(this, plugin, devices, pluginDescription(), setupTimeout);
        LOG.log(System.Logger.Level.DEBUG, "{0} ({1}, ncclNet v{2}): {3} device(s)", plugin.name(),
                plugin.libraryName(), plugin.version().number(), devices.count());
    }

    @Override
    public String name() {
        return "tcpx";
    }

    /** The loaded plugin's own name (its table's {@code name}), e.g. {@code GPUDirectTCPX_v7}. */
    public String pluginName() {
        return plugin.name();
    }

    /** The loaded plugin's name, ABI and library, e.g. {@code GPUDirectTCPX_v7 (ncclNet v7, /path)}. */
    public String pluginDescription() {
        return plugin.name() + " (ncclNet v" + plugin.version().number() + ", " + plugin.libraryName() + ")";
    }

    /** What every device of the plugin can do (see {@link #capabilities(int)}). */
    @Override
    public Set<Capability> capabilities() {
        return devices.capabilities();
    }

    /**
     * What one device can do: CUDA memory only on a device that takes it and has a PCI path, devmem
     * receives only on such a device that is also an UNPACK device ({@link DeviceCapabilities}).
     */
    @Override
    public Set<Capability> capabilities(int device) {
        devices.check(device);
        return devices.capabilities(device);
    }

    @Override
    public int deviceCount() {
        return devices.count();
    }

    @Override
    public DeviceProperties properties(int device) {
        devices.check(device);
        return devices.get(device);
    }

    @Override
    public Listener listen(int device) {
        checkOpen();
        return connector.listen(device);
    }

    @Override
    public SendComm connect(int device, byte[] handle) {
        checkOpen();
        TcpxComm.Send c = connector.connect(device, handle);
        if (c != null) {
            comms.add(c);
        }
        return c;
    }

    /**
     * The listener's one comm, {@code null} until it is there. A second accept after it was returned
     * is INVALID_PARAM and never reaches the plugin (see {@link TcpxListener}).
     */
    @Override
    public RecvComm accept(Listener listener) {
        checkOpen();
        TcpxComm.Recv c = connector.accept(listener);
        if (c != null) {
            comms.add(c);
        }
        return c;
    }

    @Override
    public MemoryRegistration register(Comm comm, long address, long size, PtrType type) {
        return registrar.register(commOf(comm), address, size, type);
    }

    @Override
    public void deregister(Comm comm, MemoryRegistration registration) {
        registrar.deregister(commOf(comm), registration);
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        TcpxComm c = commOf(comm);
        TcpxRegistration r = Registrar.covering(c, address, size, registration);
        c.throwIfFailed();
        if (c.outstanding() >= MAX_REQUESTS) {
            return null;
        }
        NativeMemory.putLong(c.outSlot, 0);
        int rc = plugin.isend(c.pointer, address, size, tag, r.mhandle, c.outSlot);
        return posted(c, rc, "isend", size, false, r.type() == PtrType.CUDA);
    }

    @Override
    public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
        TcpxComm c = commOf(comm);
        TcpxComm.Recv rc0 = (TcpxComm.Recv) c;
        TcpxRegistration r = Registrar.covering(c, address, size, registration);
        c.throwIfFailed();
        if (c.outstanding() >= MAX_REQUESTS) {
            return null;
        }
        if (r.type() == PtrType.CUDA && rc0.unpack && rc0.bounceBase == 0) {
            try {
                unpackHandles.readBounceBase(rc0);
            } catch (TransferException e) {
                throw c.failed(e);
            }
        }
        NativeMemory.putLong(c.recvData, address);
        NativeMemory.putInt(c.recvSizes, size);
        NativeMemory.putInt(c.recvTags, tag);
        NativeMemory.putLong(c.recvMhandles, r.mhandle);
        NativeMemory.putLong(c.outSlot, 0);
        int rc = plugin.irecv(c.pointer, c.recvData, c.recvSizes, c.recvTags, c.recvMhandles, c.outSlot);
        return posted(c, rc, "irecv", size, true, r.type() == PtrType.CUDA);
    }

    private NetRequest posted(TcpxComm c, int rc, String call, int size, boolean receive, boolean cuda) {
        if (rc == NcclResult.INTERNAL_ERROR && c.outstanding() > 0) {
            return null; // TCPX returns ncclInternalError when its request slots are full
        }
        if (rc != NcclResult.SUCCESS) {
            throw c.failed(NcclResult.data(call, rc));
        }
        long req = NativeMemory.getLong(c.outSlot);
        if (req == 0) {
            return null; // TCPX: not fully connected yet, retry later
        }
        TcpxNetRequest r = c.next();
        r.post(req, size, receive, cuda);
        c.posted++;
        return r;
    }

    @Override
    public boolean test(NetRequest request) {
        TcpxNetRequest r = requestOf(request);
        TcpxComm c = r.comm;
        c.checkOpen();
        c.throwIfFailed();
        if (r.state != TcpxNetRequest.State.POSTED || c.testHead() != r) {
            throw new TransferException(INVALID_PARAM, "test only the oldest uncompleted request of a comm (TCPX is"
                    + " FIFO); " + r + " is not");
        }
        NativeMemory.putInt(c.doneSlot, 0);
        int rc = plugin.test(r.pointer, c.doneSlot, c.testSizeSlot);
        if (rc != NcclResult.SUCCESS) {
            throw c.failed(NcclResult.data("test", rc));
        }
        if (NativeMemory.getInt(c.doneSlot) == 0) {
            return false;
        }
        // The size output is not trusted (TCPX never writes it): the request keeps its posted size.
        if (r.receive && r.cuda && r.size > 0 && ((TcpxComm.Recv) c).unpack) {
            r.fragmentsAddress = layout.fragmentsAddress(r.pointer);
            r.fragmentCount = layout.fragmentCount(r.pointer);
        }
        r.state = TcpxNetRequest.State.COMPLETED;
        c.completed++;
        if (!r.receive) {
            release(c, r);
        }
        return true;
    }

    @Override
    public void consumed(RecvComm comm, NetRequest request) {
        TcpxComm c = commOf(comm);
        TcpxNetRequest r = requestOf(request);
        if (r.comm != c || !r.receive || r.state != TcpxNetRequest.State.COMPLETED || c.releaseHead() != r) {
            throw new TransferException(INVALID_PARAM, "consume only the oldest completed receive of its comm; " + r
                    + " is not");
        }
        if (plugin.has(NetSlot.IRECV_CONSUMED)) { // v7+; NCCL allows a null entry (aws-ofi-nccl)
            int rc = plugin.irecvConsumed(c.pointer, r.pointer);
            if (rc != NcclResult.SUCCESS) {
                throw NcclResult.data("irecvConsumed", rc);
            }
        }
        release(c, r);
    }

    private static void release(TcpxComm c, TcpxNetRequest r) {
        r.state = TcpxNetRequest.State.FREE;
        c.released++;
    }

    @Override
    public void closeSend(SendComm comm) {
        close(commOf(comm, true));
    }

    @Override
    public void closeRecv(RecvComm comm) {
        close(commOf(comm, true));
    }

    private void close(TcpxComm c) {
        if (c.closed) {
            return;
        }
        c.closed = true;
        comms.remove(c);
        registrar.releaseAll(c);
        for (TcpxNetRequest r : c.ring) {
            r.state = TcpxNetRequest.State.FREE;
        }
        int rc = c.receiving() ? plugin.closeRecv(c.pointer) : plugin.closeSend(c.pointer);
        if (rc != NcclResult.SUCCESS) {
            throw NcclResult.control(c.receiving() ? "closeRecv" : "closeSend", rc);
        }
    }

    @Override
    public void closeListen(Listener listener) {
        connector.closeListen(listener);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (TcpxComm c : List.copyOf(comms)) {
            try {
                close(c);
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        try {
            connector.close();
        } catch (RuntimeException e) {
            first = first == null ? e : first;
        }
        if (first != null) {
            throw first;
        }
    }

    // ---- checks ----

    private void checkOpen() {
        if (closed) {
            throw new TransferException(INVALID_PARAM, "the TCPX transport is closed");
        }
    }

    private TcpxComm commOf(Comm comm) {
        return commOf(comm, false);
    }

    private TcpxComm commOf(Comm comm, boolean allowClosed) {
        if (!(comm instanceof TcpxComm c) || c.owner != this) {
            throw new TransferException(INVALID_PARAM, "not a comm of this TCPX transport: " + comm);
        }
        if (!allowClosed) {
            c.checkOpen();
        }
        return c;
    }

    private TcpxNetRequest requestOf(NetRequest request) {
        if (!(request instanceof TcpxNetRequest r) || r.comm.owner != this) {
            throw new TransferException(INVALID_PARAM, "not a request of this TCPX transport: " + request);
        }
        return r;
    }

    @Override
    public String toString() {
        return "TcpxTransport[" + pluginDescription() + "]";
    }

    /** The plugin and the call path it uses; tests and benchmarks only. */
    NetPlugin plugin() {
        return plugin;
    }

    /** Where a receive comm's bounce buffer lives; tests only. */
    MemoryKind bounceKindOf(RecvComm comm) {
        return commOf(comm).bounceKind;
    }
}
