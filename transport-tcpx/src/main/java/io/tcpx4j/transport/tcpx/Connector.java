package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.Listener;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import static io.tcpx4j.api.TransferException.Code.INVALID_PARAM;

/**
 * Connection set-up for one transport: listen, the set-up threads that run the plugin's connect and
 * accept ({@link SetupCall}), connects in progress keyed by device and handle (TCPX keeps connect's
 * progress inside the handle memory, so every call for one handle reuses one native copy), the open
 * listeners and their one accept, and closeListen. A comm it returns is the caller's to track; the
 * connector keeps nothing of it.
 *
 * <p>Thread-safe: listeners and pending connects live in concurrent collections; a listener's and a
 * pending connect's set-up state is guarded by that object's monitor, which is never held across a
 * plugin call.
 */
final class Connector {

    /** The transport the listeners and comms made here belong to. */
    private final TcpxTransport owner;
    private final NetPlugin plugin;
    private final PluginDevices devices;
    /** The plugin's name, ABI and library, for set-up messages. */
    private final String description;
    private final Duration setupTimeout;
    private final ExecutorService setupThreads;
    private final Set<TcpxListener> listeners = ConcurrentHashMap.newKeySet();
    private final Map<HandleKey, PendingConnect> pendingConnects = new ConcurrentHashMap<>();

    Connector(TcpxTransport owner, NetPlugin plugin, PluginDevices devices, String description, Duration setupTimeout) {
        this.owner = owner;
        this.plugin = plugin;
        this.devices = devices;
        this.description = description;
        this.setupTimeout = setupTimeout;
        AtomicInteger threads = new AtomicInteger();
        String threadName = "tcpx-setup-" + plugin.name() + "-";
        this.setupThreads = Executors.newCachedThreadPool(r -> {
            // daemon: a plugin call that never returns must not keep the process alive
            Thread t = new Thread(r, threadName + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    Listener listen(int device) {
        devices.check(device);
        Memory handle = new Memory(Listener.HANDLE_SIZE);
        handle.clear();
        Memory out = new Memory(8);
        out.setLong(0, 0);
        NcclResult.checkControl("listen", plugin.listen(device, handle, out));
        long ptr = out.getLong(0);
        if (ptr == 0) {
            throw new TransferException(TransferException.Code.BACKEND, "TCPX listen returned no listen comm");
        }
        TcpxListener l = new TcpxListener(owner, device, ptr, handle.getByteArray(0, Listener.HANDLE_SIZE));
        listeners.add(l);
        return l;
    }

    /** The connected comm, or {@code null} while the connect to {@code handle} is under way. */
    TcpxComm.Send connect(int device, byte[] handle) {
        devices.check(device);
        if (handle == null || handle.length != Listener.HANDLE_SIZE) {
            throw new TransferException(INVALID_PARAM, "a connection handle has exactly " + Listener.HANDLE_SIZE + " bytes");
        }
        HandleKey key = new HandleKey(device, handle.clone());
        dropAbandonedConnects();
        PendingConnect pc = pendingConnects.computeIfAbsent(key, k -> new PendingConnect(k.handle));
        SetupCall call;
        synchronized (pc) {
            if (pc.call == null) {
                pc.call = new SetupCall("connect", description,
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
        return new TcpxComm.Send(owner, device, ptr);
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
    TcpxComm.Recv accept(Listener listener) {
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
                l.accept = new SetupCall("accept", description,
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
        boolean unpack = UnpackHandles.unpack(plugin, dh);
        return new TcpxComm.Recv(owner, l.device, ptr, l.deviceHandleBacking, dh, unpack);
    }

    void closeListen(Listener listener) {
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
            NcclResult.checkControl("closeListen", plugin.closeListen(l.pointer));
            return;
        }
        // An accept blocked inside the plugin still uses the listen comm: it is closed when that call
        // returns, on its set-up thread; closeListen itself never waits for it.
        accept.abandon(() -> NcclResult.checkControl("closeListen", plugin.closeListen(l.pointer)));
    }

    /**
     * Closes every listener, abandons every connect in progress and stops taking set-up work; the
     * transport is closing. Throws the first failure of a closeListen after all of it is done.
     */
    void close() {
        RuntimeException first = null;
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

    private TcpxListener listenerOf(Listener listener) {
        if (!(listener instanceof TcpxListener l) || l.owner != owner) {
            throw new TransferException(INVALID_PARAM, "not a listener of this TCPX transport: " + listener);
        }
        return l;
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
}
