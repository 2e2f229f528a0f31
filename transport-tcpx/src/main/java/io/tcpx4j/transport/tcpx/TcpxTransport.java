package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.tcpx4j.api.MemoryDescriptor;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import static io.tcpx4j.api.TransferException.Code.INVALID_PARAM;
import static io.tcpx4j.api.TransferException.Code.NOT_SUPPORTED;

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
 *       that has a PCI path (TCPX derives the NIC's PCI address from it);</li>
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
 * <p>Thread-safe across comms; each comm is driven by one thread at a time (the NetTransport
 * contract). {@link #connect} and {@link #accept} may be called from any thread.
 */
public final class TcpxTransport implements NetTransport {

    private static final System.Logger LOG = System.getLogger(TcpxTransport.class.getName());

    private final NetPlugin plugin;
    private final DeviceMemory deviceMemory;
    private final TcpxRequestLayout layout;
    private final List<DeviceProperties> devices;
    private final Set<Capability> capabilities;
    private final Set<TcpxComm> comms = ConcurrentHashMap.newKeySet();
    private final Set<TcpxListener> listeners = ConcurrentHashMap.newKeySet();
    private final Map<HandleKey, PendingConnect> pendingConnects = new ConcurrentHashMap<>();
    private final Duration setupTimeout;
    private final ExecutorService setupThreads;
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
        this.deviceMemory = Objects.requireNonNull(deviceMemory, "deviceMemory");
        this.layout = Objects.requireNonNull(layout, "layout");
        this.setupTimeout = Objects.requireNonNull(setupTimeout, "setupTimeout");
        Memory n = new Memory(4);
        n.setInt(0, 0);
        check("devices", plugin.devices(n));
        List<DeviceProperties> list = new ArrayList<>();
        for (int d = 0; d < n.getInt(0); d++) {
            list.add(readProperties(d));
        }
        this.devices = List.copyOf(list);
        EnumSet<Capability> caps = EnumSet.noneOf(Capability.class);
        if (!devices.isEmpty() && devices.get(0).supports(PtrType.CUDA)) {
            caps.add(Capability.CUDA_MEMORY);
        }
        boolean unpackDevice = !devices.isEmpty() && devices.get(0).netDeviceType() == DeviceProperties.NET_DEVICE_UNPACK;
        if (unpackDevice && caps.contains(Capability.CUDA_MEMORY) && !plugin.has(NetSlot.IRECV_CONSUMED)) {
            throw new TransferException(NOT_SUPPORTED, plugin.libraryName() + ": " + plugin.name()
                    + " reports UNPACK devices that take CUDA memory but has no irecvConsumed, so bounce pages"
                    + " could never be handed back; not a usable net plugin");
        }
        // Only receives into CUDA memory land in bounce pages: a host-only build (TCPX's HOST_PTR_ONLY)
        // still reports the UNPACK device type, but every receive it makes lands in place.
        if (caps.contains(Capability.CUDA_MEMORY) && unpackDevice) {
            caps.add(Capability.DEVMEM_RECEIVE);
        }
        this.capabilities = Set.copyOf(caps);
        AtomicInteger threads = new AtomicInteger();
        String threadName = "tcpx-setup-" + plugin.name() + "-";
        this.setupThreads = Executors.newCachedThreadPool(r -> {
            // daemon: a plugin call that never returns must not keep the process alive
            Thread t = new Thread(r, threadName + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        LOG.log(System.Logger.Level.DEBUG, "{0} ({1}, ncclNet v{2}): {3} device(s)", plugin.name(),
                plugin.libraryName(), plugin.version().number(), devices.size());
    }

    private DeviceProperties readProperties(int dev) {
        NetPluginVersion.PropertiesLayout l = plugin.version().properties();
        Memory p = new Memory(l.size);
        p.clear();
        check("getProperties(" + dev + ")", plugin.getProperties(dev, p));
        Pointer name = p.getPointer(l.name);
        Pointer pci = p.getPointer(l.pciPath);
        int bits = p.getInt(l.ptrSupport);
        EnumSet<PtrType> ptr = EnumSet.noneOf(PtrType.class);
        for (PtrType t : PtrType.values()) {
            if ((bits & t.ncclBit()) != 0) {
                ptr.add(t);
            }
        }
        return new DeviceProperties(name == null ? "" : name.getString(0), pci == null ? "" : pci.getString(0),
                p.getLong(l.guid), ptr, p.getInt(l.speed), p.getInt(l.port), p.getFloat(l.latency),
                p.getInt(l.maxComms), p.getInt(l.maxRecvs),
                l.netDeviceType < 0 ? 0 : p.getInt(l.netDeviceType),
                l.netDeviceVersion < 0 ? 0 : p.getInt(l.netDeviceVersion));
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

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public int deviceCount() {
        return devices.size();
    }

    @Override
    public DeviceProperties properties(int device) {
        checkDevice(device);
        return devices.get(device);
    }

    @Override
    public Listener listen(int device) {
        checkOpen();
        checkDevice(device);
        Memory handle = new Memory(Listener.HANDLE_SIZE);
        handle.clear();
        Memory out = new Memory(8);
        out.setLong(0, 0);
        check("listen", plugin.listen(device, handle, out));
        long ptr = out.getLong(0);
        if (ptr == 0) {
            throw new TransferException(TransferException.Code.BACKEND, "TCPX listen returned no listen comm");
        }
        TcpxListener l = new TcpxListener(this, device, ptr, handle.getByteArray(0, Listener.HANDLE_SIZE));
        listeners.add(l);
        return l;
    }

    @Override
    public SendComm connect(int device, byte[] handle) {
        checkOpen();
        checkDevice(device);
        if (handle == null || handle.length != Listener.HANDLE_SIZE) {
            throw new TransferException(INVALID_PARAM, "a connection handle has exactly " + Listener.HANDLE_SIZE + " bytes");
        }
        HandleKey key = new HandleKey(device, handle.clone());
        dropAbandonedConnects();
        PendingConnect pc = pendingConnects.computeIfAbsent(key, k -> new PendingConnect(k.handle));
        SetupCall call;
        synchronized (pc) {
            if (pc.call == null) {
                pc.call = new SetupCall("connect", pluginDescription(),
                        out -> plugin.connect(device, pc.handle, out, pc.deviceHandleSlot),
                        plugin::closeSend, setupTimeout).start(setupThreads);
            }
            call = pc.call;
        }
        long ptr;
        try {
            ptr = call.poll();
        } catch (TransferException e) {
            pendingConnects.remove(key, pc); // a failed attempt throws once; a later call starts over
            throw e;
        }
        if (ptr == 0) {
            return null;
        }
        pendingConnects.remove(key, pc);
        TcpxComm.Send c = new TcpxComm.Send(this, device, ptr);
        comms.add(c);
        return c;
    }

    /**
     * Forgets connects whose caller stopped asking (its connection failed elsewhere): a comm the plugin
     * produced for one of them is closed instead of staying open until the transport closes.
     */
    private void dropAbandonedConnects() {
        if (pendingConnects.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (Map.Entry<HandleKey, PendingConnect> e : pendingConnects.entrySet()) {
            SetupCall call;
            synchronized (e.getValue()) {
                call = e.getValue().call;
            }
            if (call != null && call.stale(now) && pendingConnects.remove(e.getKey(), e.getValue())) {
                call.abandon(null);
            }
        }
    }

    /**
     * The listener's one comm, {@code null} until it is there. A second accept after it was returned
     * is INVALID_PARAM and never reaches the plugin (see {@link TcpxListener}).
     */
    @Override
    public RecvComm accept(Listener listener) {
        checkOpen();
        TcpxListener l = listenerOf(listener);
        SetupCall call;
        synchronized (l) {
            if (l.closed) {
                throw new TransferException(INVALID_PARAM, "listener is closed");
            }
            if (l.yielded) {
                throw new TransferException(INVALID_PARAM, l + " already yielded its comm: a listener yields exactly"
                        + " one (TCPX frees its accept state on success, so a second accept would free it again)");
            }
            if (l.accept == null) {
                l.accept = new SetupCall("accept", pluginDescription(),
                        out -> plugin.accept(l.pointer, out, l.deviceHandleSlot),
                        plugin::closeRecv, setupTimeout).start(setupThreads);
            }
            call = l.accept;
        }
        long ptr = call.poll();
        if (ptr == 0) {
            return null;
        }
        synchronized (l) {
            l.yielded = true;
        }
        Pointer dh = l.deviceHandle;
        boolean unpack = plugin.version().deviceHandles() && plugin.has(NetSlot.IRECV_CONSUMED)
                && dh.getInt(NativeLayouts.DeviceHandle.TYPE) == NativeLayouts.DeviceHandle.TYPE_UNPACK;
        TcpxComm.Recv c = new TcpxComm.Recv(this, l.device, ptr, l.deviceHandleBacking, dh, unpack);
        comms.add(c);
        return c;
    }

    /**
     * The device handle's {@code handle} points at the 24-byte unpack handle in device memory; its
     * {@code bounce_buf} is the base every fragment's src_off is relative to. One device-to-host copy
     * per receive comm, at its first receive into CUDA memory: a comm that only ever receives host
     * memory never needs it.
     */
    private void readBounceBase(TcpxComm.Recv c) {
        Pointer dh = c.deviceHandle;
        int version = dh.getInt(NativeLayouts.DeviceHandle.VERSION);
        long handle = Pointer.nativeValue(dh.getPointer(NativeLayouts.DeviceHandle.HANDLE));
        long size = dh.getLong(NativeLayouts.DeviceHandle.SIZE_FIELD);
        if (version != NativeLayouts.DeviceHandle.UNPACK_VERSION || handle == 0
                || size < NativeLayouts.UnpackHandle.BYTES) {
            throw new TransferException(TransferException.Code.BACKEND, "unexpected UNPACK device handle from "
                    + plugin.name() + ": version " + version + ", handle 0x" + Long.toHexString(handle) + ", size " + size
                    + " (this binding reads version " + NativeLayouts.DeviceHandle.UNPACK_VERSION + ")");
        }
        Memory host = new Memory(NativeLayouts.UnpackHandle.BYTES);
        MemoryDescriptor where = deviceMemory.allocationRange(handle, NativeLayouts.UnpackHandle.BYTES);
        deviceMemory.copy(MemoryDescriptor.dram(Pointer.nativeValue(host), NativeLayouts.UnpackHandle.BYTES),
                new MemoryDescriptor(handle, NativeLayouts.UnpackHandle.BYTES, where.kind(), where.device()));
        long base = host.getLong(NativeLayouts.UnpackHandle.BOUNCE_BUF);
        if (base == 0) {
            throw new TransferException(TransferException.Code.BACKEND,
                    plugin.name() + " gave a receive comm without a bounce buffer, so it cannot receive into CUDA memory");
        }
        c.bounceKind = deviceMemory.kindOf(base);
        if (c.bounceKind == MemoryKind.VRAM) {
            MemoryDescriptor area = deviceMemory.allocationRange(base, 1);
            c.bounceBytes = area.address() + area.length() - base;
        } else {
            c.bounceBytes = Long.MAX_VALUE;
        }
        c.bounceBase = base;
    }

    @Override
    public MemoryRegistration register(Comm comm, long address, long size, PtrType type) {
        TcpxComm c = commOf(comm);
        Objects.requireNonNull(type, "type");
        if (type == PtrType.DMABUF) {
            throw new TransferException(NOT_SUPPORTED, "dma-buf registration is not supported (TCPX's slot is null)");
        }
        if (type == PtrType.CUDA && !capabilities.contains(Capability.CUDA_MEMORY)) {
            throw new TransferException(NOT_SUPPORTED, plugin.name() + " does not take CUDA memory");
        }
        if (size < 0) {
            throw new TransferException(INVALID_PARAM, "negative registration size " + size);
        }
        if (type == PtrType.CUDA && (address % CUDA_ALIGNMENT != 0 || size % CUDA_ALIGNMENT != 0)) {
            throw new TransferException(INVALID_PARAM, "CUDA registrations must be 4 KiB aligned in start and size"
                    + " (TCPX's dma-buf path): 0x" + Long.toHexString(address) + "+" + size);
        }
        if (type == PtrType.CUDA && devices.get(c.device).pciPath().isEmpty()) {
            // TCPX's regMr takes the NIC's PCI address from the device's PCI path and crashes without one
            DeviceProperties p = devices.get(c.device);
            throw new TransferException(NOT_SUPPORTED, "device " + c.device + " (" + p.name() + ") of " + plugin.name()
                    + " has no PCI path, and CUDA memory is registered through the NIC's PCI address;"
                    + " use a NIC that is a PCI device for GPU memory");
        }
        if (!plugin.version().regMrSizeT() && size > Integer.MAX_VALUE) {
            throw new TransferException(INVALID_PARAM, "ncclNet v" + plugin.version().number()
                    + " registers at most " + Integer.MAX_VALUE + " bytes at once; got " + size);
        }
        NativeMemory.putLong(c.outSlot, 0);
        check("regMr", plugin.regMr(c.pointer, address, size, type.ncclBit(), c.outSlot));
        TcpxRegistration r = new TcpxRegistration(c, NativeMemory.getLong(c.outSlot), address, size, type);
        c.registrations.add(r);
        return r;
    }

    @Override
    public void deregister(Comm comm, MemoryRegistration registration) {
        TcpxComm c = commOf(comm);
        TcpxRegistration r = registrationOf(c, registration);
        r.released = true;
        c.registrations.remove(r);
        check("deregMr", plugin.deregMr(c.pointer, r.mhandle));
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        TcpxComm c = commOf(comm);
        TcpxRegistration r = checkPost(c, address, size, registration);
        checkNotFailed(c);
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
        TcpxRegistration r = checkPost(c, address, size, registration);
        checkNotFailed(c);
        if (c.outstanding() >= MAX_REQUESTS) {
            return null;
        }
        if (r.type() == PtrType.CUDA && rc0.unpack && rc0.bounceBase == 0) {
            try {
                readBounceBase(rc0);
            } catch (TransferException e) {
                throw failed(c, e);
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
            throw failed(c, NcclResult.data(call, rc));
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

    private TcpxRegistration checkPost(TcpxComm c, long address, int size, MemoryRegistration registration) {
        TcpxRegistration r = registrationOf(c, registration);
        if (size < 0 || !r.covers(address, size)) {
            throw new TransferException(INVALID_PARAM, "buffer 0x" + Long.toHexString(address) + "+" + size
                    + " outside its registration " + r);
        }
        return r;
    }

    @Override
    public boolean test(NetRequest request) {
        TcpxNetRequest r = requestOf(request);
        TcpxComm c = r.comm;
        checkComm(c);
        checkNotFailed(c);
        if (r.state != TcpxNetRequest.State.POSTED || c.testHead() != r) {
            throw new TransferException(INVALID_PARAM, "test only the oldest uncompleted request of a comm (TCPX is"
                    + " FIFO); " + r + " is not");
        }
        NativeMemory.putInt(c.doneSlot, 0);
        int rc = plugin.test(r.pointer, c.doneSlot, c.testSizeSlot);
        if (rc != NcclResult.SUCCESS) {
            throw failed(c, NcclResult.data("test", rc));
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
        for (TcpxRegistration r : c.registrations) {
            r.released = true;
            plugin.deregMr(c.pointer, r.mhandle); // best effort: the comm goes anyway
        }
        c.registrations.clear();
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
        TcpxListener l = listenerOf(listener);
        SetupCall accept;
        synchronized (l) {
            if (l.closed) {
                return;
            }
            l.closed = true;
            listeners.remove(l);
            accept = l.accept;
        }
        if (accept == null) {
            check("closeListen", plugin.closeListen(l.pointer));
            return;
        }
        // An accept blocked inside the plugin still uses the listen comm: it is closed when that call
        // returns, on its set-up thread; closeListen itself never waits for it.
        accept.abandon(() -> check("closeListen", plugin.closeListen(l.pointer)));
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
        for (TcpxListener l : List.copyOf(listeners)) {
            try {
                closeListen(l);
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        for (PendingConnect pc : List.copyOf(pendingConnects.values())) {
            SetupCall call;
            synchronized (pc) {
                call = pc.call;
            }
            if (call != null) {
                call.abandon(null);
            }
        }
        pendingConnects.clear();
        setupThreads.shutdown(); // running set-up calls end on their own; a blocked one is abandoned
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

    private void checkDevice(int device) {
        if (device < 0 || device >= devices.size()) {
            throw new TransferException(INVALID_PARAM, "no network device " + device + " (have " + devices.size() + ")");
        }
    }

    private static void check(String call, int rc) {
        if (rc != NcclResult.SUCCESS) {
            throw NcclResult.control(call, rc);
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
            checkComm(c);
        }
        return c;
    }

    /** Remembers the first failure of a comm's data path (misuse aside); see {@link TcpxComm#failure}. */
    private static TransferException failed(TcpxComm c, TransferException e) {
        if (c.failure == null && e.code() != INVALID_PARAM) {
            c.failure = e;
        }
        return e;
    }

    private static void checkNotFailed(TcpxComm c) {
        if (c.failure != null) {
            throw new TransferException(c.failure.code(), c + " failed before: " + c.failure.getMessage(), c.failure);
        }
    }

    private static void checkComm(TcpxComm c) {
        if (c.closed) {
            throw new TransferException(INVALID_PARAM, c + " is closed");
        }
    }

    private TcpxListener listenerOf(Listener listener) {
        if (!(listener instanceof TcpxListener l) || l.owner != this) {
            throw new TransferException(INVALID_PARAM, "not a listener of this TCPX transport: " + listener);
        }
        return l;
    }

    private static TcpxRegistration registrationOf(TcpxComm c, MemoryRegistration registration) {
        if (!(registration instanceof TcpxRegistration r) || r.comm != c) {
            throw new TransferException(INVALID_PARAM, "registration " + registration + " is not one of " + c
                    + " (TCPX registrations are per comm)");
        }
        if (r.released) {
            throw new TransferException(INVALID_PARAM, "registration " + r + " was deregistered");
        }
        return r;
    }

    private TcpxNetRequest requestOf(NetRequest request) {
        if (!(request instanceof TcpxNetRequest r) || r.comm.owner != this) {
            throw new TransferException(INVALID_PARAM, "not a request of this TCPX transport: " + request);
        }
        return r;
    }

    /** A handle being connected: TCPX keeps connect's progress inside the handle, so retries reuse it. */
    private static final class PendingConnect {
        final Memory handle = new Memory(Listener.HANDLE_SIZE);
        final Memory deviceHandleSlot = new Memory(8);
        /** Guarded by this. */
        SetupCall call;

        PendingConnect(byte[] bytes) {
            handle.write(0, bytes, 0, bytes.length);
            deviceHandleSlot.setLong(0, 0); // connect does not fill a send device handle
        }
    }

    private record HandleKey(int device, byte[] handle) {
        @Override
        public boolean equals(Object o) {
            return o instanceof HandleKey k && k.device == device && Arrays.equals(k.handle, handle);
        }

        @Override
        public int hashCode() {
            return 31 * device + Arrays.hashCode(handle);
        }
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
