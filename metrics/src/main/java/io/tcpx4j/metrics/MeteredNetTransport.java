package io.tcpx4j.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link NetTransport} that counts, per device and direction ({@code send}, {@code receive}), the
 * requests posted, completed and failed and the bytes of the completed ones, tagged {@code transport},
 * {@code device} (its index) and {@code nic} (its interface name). Every call goes to the transport it
 * wraps; comms, listeners and requests are handed out wrapped, so that a completion is counted for its
 * comm's device, and unwrapped on the way back.
 *
 * <p>These counters see every engine on the transport, in both directions: the transfers this process
 * posts and those that peers read from or write into it, an engine's warm-up included. They see the data
 * channels only: transfers small enough to travel inside control frames (the inline limit) never reach
 * the transport.
 *
 * <p>Meter names (Prometheus names in brackets): {@value #POSTED} ({@code
 * tcpx4j_transport_requests_posted_total}), {@value #COMPLETED}, {@value #FAILED} and {@value #BYTES}
 * ({@code tcpx4j_transport_bytes_total}).
 *
 * <p>Thread-safe as the transport it wraps: comms are driven by one thread at a time.
 */
public final class MeteredNetTransport extends ForwardingNetTransport {

    public static final String POSTED = "tcpx4j.transport.requests.posted";
    public static final String COMPLETED = "tcpx4j.transport.requests.completed";
    public static final String FAILED = "tcpx4j.transport.requests.failed";
    public static final String BYTES = "tcpx4j.transport.bytes";

    private final MeterRegistry registry;
    private final ConcurrentHashMap<Integer, DeviceMeters> devices = new ConcurrentHashMap<>();
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    public MeteredNetTransport(NetTransport delegate, MeterRegistry registry) {
        super(Objects.requireNonNull(delegate, "delegate"));
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    private DeviceMeters device(int device) {
        return devices.computeIfAbsent(device, d -> new DeviceMeters(registry,
                Tags.of("transport", delegate.name(), "device", Integer.toString(d), "nic", delegate.properties(d).name()),
                meters));
    }

    /** Removes this transport's meters from the registry. */
    public void removeMeters() {
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
        devices.clear();
    }

    private static Comm unwrap(Comm comm) {
        return comm instanceof MeteredComm m ? m.delegate() : comm;
    }

    private static SendComm unwrap(SendComm comm) {
        return comm instanceof MeteredComm.Send m ? m.delegate : comm;
    }

    private static RecvComm unwrap(RecvComm comm) {
        return comm instanceof MeteredComm.Recv m ? m.delegate : comm;
    }

    private static NetRequest unwrap(NetRequest request) {
        return request instanceof MeteredRequest m ? m.delegate : request;
    }

    private static Listener unwrap(Listener listener) {
        return listener instanceof MeteredListener m ? m.delegate : listener;
    }

    @Override
    public Listener listen(int device) {
        return metered(delegate.listen(device), device);
    }

    @Override
    public Listener listen(int device, DriverSelector driver) {
        return metered(delegate.listen(device, driver), device);
    }

    private static Listener metered(Listener l, int device) {
        return l == null ? null : new MeteredListener(l, device);
    }

    @Override
    public SendComm connect(int device, byte[] handle) {
        return metered(delegate.connect(device, handle), device);
    }

    @Override
    public SendComm connect(int device, byte[] handle, DriverSelector driver) {
        return metered(delegate.connect(device, handle, driver), device);
    }

    private SendComm metered(SendComm c, int device) {
        return c == null ? null : new MeteredComm.Send(c, device(device));
    }

    @Override
    public RecvComm accept(Listener listener) {
        RecvComm c = delegate.accept(unwrap(listener));
        return c == null || !(listener instanceof MeteredListener l) ? c : new MeteredComm.Recv(c, device(l.device));
    }

    @Override
    public MemoryRegistration register(Comm comm, long address, long size, PtrType type) {
        return delegate.register(unwrap(comm), address, size, type);
    }

    @Override
    public void deregister(Comm comm, MemoryRegistration registration) {
        delegate.deregister(unwrap(comm), registration);
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        NetRequest r = delegate.isend(unwrap(comm), address, size, tag, registration);
        return r == null || !(comm instanceof MeteredComm.Send m) ? r : m.posted(r);
    }

    @Override
    public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
        NetRequest r = delegate.irecv(unwrap(comm), address, size, tag, registration);
        return r == null || !(comm instanceof MeteredComm.Recv m) ? r : m.posted(r);
    }

    @Override
    public boolean test(NetRequest request) {
        if (!(request instanceof MeteredRequest r)) {
            return delegate.test(request);
        }
        DeviceMeters m = r.comm.meters;
        int direction = r.comm.direction;
        boolean done;
        try {
            done = delegate.test(r.delegate);
        } catch (TransferException e) {
            m.failed[direction].increment();
            r.busy = false;
            throw e;
        }
        if (done) {
            m.completed[direction].increment();
            m.bytes[direction].increment(r.delegate.size());
            if (direction == DeviceMeters.SEND) {
                r.busy = false;
            }
        }
        return done;
    }

    @Override
    public void consumed(RecvComm comm, NetRequest request) {
        delegate.consumed(unwrap(comm), unwrap(request));
        if (request instanceof MeteredRequest r) {
            r.busy = false;
        }
    }

    @Override
    public void closeSend(SendComm comm) {
        delegate.closeSend(unwrap(comm));
    }

    @Override
    public void closeRecv(RecvComm comm) {
        delegate.closeRecv(unwrap(comm));
    }

    @Override
    public void closeListen(Listener listener) {
        delegate.closeListen(unwrap(listener));
    }

    /** A transport's listener and the device it listens on. */
    private static final class MeteredListener implements Listener {
        final Listener delegate;
        final int device;

        MeteredListener(Listener delegate, int device) {
            this.delegate = delegate;
            this.device = device;
        }

        @Override
        public byte[] handle() {
            return delegate.handle();
        }
    }
}
