package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.domain.protocol.RegionMetadata;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A region registered with the engine. Transfers pin it ({@link #acquire()}) for as long as they may
 * touch it, so deregistration never pulls memory from under a posted request.
 *
 * <p>Thread-safe.
 */
final class LocalRegion implements RegisteredMemory {

    final Engine engine;
    final MemoryDescriptor range;
    final RegistrationGroup group;
    private final byte[] metadata;
    private final AtomicInteger inflight = new AtomicInteger();
    private volatile boolean closed;

    LocalRegion(Engine engine, MemoryDescriptor range, RegistrationGroup group) {
        this.engine = engine;
        this.range = range;
        this.group = group;
        this.metadata = engine == null ? new byte[0] : new RegionMetadata(engine.name(), range).encode();
    }

    @Override
    public MemoryDescriptor descriptor() {
        return range;
    }

    @Override
    public byte[] publicMetadata() {
        return metadata.clone();
    }

    /** Pins the region for one transfer; false if it was deregistered. */
    boolean acquire() {
        inflight.incrementAndGet();
        if (closed) {
            inflight.decrementAndGet();
            return false;
        }
        return true;
    }

    void releaseRef() {
        inflight.decrementAndGet();
    }

    int inflight() {
        return inflight.get();
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            engine.deregister(this);
        }
    }

    @Override
    public String toString() {
        return "RegisteredMemory[" + range + "]";
    }
}
