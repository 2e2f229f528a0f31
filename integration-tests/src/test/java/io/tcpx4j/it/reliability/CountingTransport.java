package io.tcpx4j.it.reliability;

import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link NetTransport} that forwards to a real one and counts what the engine holds on it: comms,
 * listeners and memory registrations alive. Leak checks read these after a failure or a close.
 *
 * <p>Thread-safe (counters are atomics; the SPI's own threading rules apply to the delegate).
 */
final class CountingTransport extends ForwardingNetTransport {

    private final AtomicInteger comms = new AtomicInteger();
    private final AtomicLong commsOpened = new AtomicLong();
    private final AtomicInteger listeners = new AtomicInteger();
    private final AtomicInteger registrations = new AtomicInteger();

    CountingTransport(NetTransport delegate) {
        super(delegate);
    }

    int comms() {
        return comms.get();
    }

    /** Comms ever opened: unchanged means no reconnect happened. */
    long commsOpened() {
        return commsOpened.get();
    }

    int listeners() {
        return listeners.get();
    }

    int registrations() {
        return registrations.get();
    }

    @Override
    public Listener listen(int device, DriverSelector driver) {
        Listener l = delegate.listen(device, driver);
        listeners.incrementAndGet();
        return l;
    }

    @Override
    public SendComm connect(int device, byte[] handle, DriverSelector driver) {
        SendComm c = delegate.connect(device, handle, driver);
        if (c != null) {
            comms.incrementAndGet();
            commsOpened.incrementAndGet();
        }
        return c;
    }

    @Override
    public RecvComm accept(Listener listener) {
        RecvComm c = delegate.accept(listener);
        if (c != null) {
            comms.incrementAndGet();
            commsOpened.incrementAndGet();
        }
        return c;
    }

    @Override
    public MemoryRegistration register(Comm comm, long address, long size, io.tcpx4j.domain.port.out.PtrType type) {
        MemoryRegistration r = delegate.register(comm, address, size, type);
        registrations.incrementAndGet();
        return r;
    }

    @Override
    public void deregister(Comm comm, MemoryRegistration registration) {
        registrations.decrementAndGet();
        delegate.deregister(comm, registration);
    }

    @Override
    public void closeSend(SendComm comm) {
        comms.decrementAndGet();
        delegate.closeSend(comm);
    }

    @Override
    public void closeRecv(RecvComm comm) {
        comms.decrementAndGet();
        delegate.closeRecv(comm);
    }

    @Override
    public void closeListen(Listener listener) {
        listeners.decrementAndGet();
        delegate.closeListen(listener);
    }

    @Override
    public String toString() {
        return "comms " + comms + ", listeners " + listeners + ", registrations " + registrations;
    }
}
