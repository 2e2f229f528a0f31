package io.tcpx4j.domain.port.out;

import java.util.Set;

/**
 * Forwards every call to another transport. Wrappers that meter, count, watch or (in tests) break one
 * behaviour extend it and override only that. Thread-safety is the delegate's.
 */
public class ForwardingNetTransport implements NetTransport {

    protected final NetTransport delegate;

    public ForwardingNetTransport(NetTransport delegate) {
        this.delegate = delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public Set<Capability> capabilities() {
        return delegate.capabilities();
    }

    @Override
    public Set<Capability> capabilities(int device) {
        return delegate.capabilities(device);
    }

    @Override
    public int deviceCount() {
        return delegate.deviceCount();
    }

    @Override
    public DeviceProperties properties(int device) {
        return delegate.properties(device);
    }

    @Override
    public Listener listen(int device) {
        return delegate.listen(device);
    }

    @Override
    public Listener listen(int device, DriverSelector driver) {
        return delegate.listen(device, driver);
    }

    @Override
    public SendComm connect(int device, byte[] handle) {
        return delegate.connect(device, handle);
    }

    @Override
    public SendComm connect(int device, byte[] handle, DriverSelector driver) {
        return delegate.connect(device, handle, driver);
    }

    @Override
    public RecvComm accept(Listener listener) {
        return delegate.accept(listener);
    }

    @Override
    public MemoryRegistration register(Comm comm, long address, long size, PtrType type) {
        return delegate.register(comm, address, size, type);
    }

    @Override
    public void deregister(Comm comm, MemoryRegistration registration) {
        delegate.deregister(comm, registration);
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        return delegate.isend(comm, address, size, tag, registration);
    }

    @Override
    public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
        return delegate.irecv(comm, address, size, tag, registration);
    }

    @Override
    public boolean test(NetRequest request) {
        return delegate.test(request);
    }

    @Override
    public void consumed(RecvComm comm, NetRequest request) {
        delegate.consumed(comm, request);
    }

    @Override
    public void closeSend(SendComm comm) {
        delegate.closeSend(comm);
    }

    @Override
    public void closeRecv(RecvComm comm) {
        delegate.closeRecv(comm);
    }

    @Override
    public void closeListen(Listener listener) {
        delegate.closeListen(listener);
    }

    @Override
    public Runnable wakeOnProgress(Runnable wake) {
        return delegate.wakeOnProgress(wake);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
