package io.tcpx4j.it.reliability;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link HostMemory} that counts what the engine allocates through it (its discard buffer, staging)
 * and has not freed: leak checks expect zero after the engine closed.
 *
 * <p>Thread-safe.
 */
final class CountingMemory implements DeviceMemory {

    private final HostMemory delegate = new HostMemory();
    private final AtomicLong live = new AtomicLong();
    private final AtomicLong liveBytes = new AtomicLong();

    long liveAllocations() {
        return live.get();
    }

    long liveBytes() {
        return liveBytes.get();
    }

    @Override
    public boolean hasDevices() {
        return delegate.hasDevices();
    }

    @Override
    public MemoryKind kindOf(long address) {
        return delegate.kindOf(address);
    }

    @Override
    public MemoryDescriptor allocationRange(long address, long length) {
        return delegate.allocationRange(address, length);
    }

    @Override
    public MemoryDescriptor allocate(MemoryKind kind, long size, int device) {
        MemoryDescriptor d = delegate.allocate(kind, size, device);
        live.incrementAndGet();
        liveBytes.addAndGet(d.length());
        return d;
    }

    @Override
    public MemoryDescriptor allocatePinned(long size) {
        MemoryDescriptor d = delegate.allocatePinned(size);
        live.incrementAndGet();
        liveBytes.addAndGet(d.length());
        return d;
    }

    @Override
    public void free(MemoryDescriptor memory) {
        live.decrementAndGet();
        liveBytes.addAndGet(-memory.length());
        delegate.free(memory);
    }

    @Override
    public void copy(MemoryDescriptor destination, MemoryDescriptor source) {
        delegate.copy(destination, source);
    }

    @Override
    public long copyAsync(MemoryDescriptor destination, MemoryDescriptor source) {
        return delegate.copyAsync(destination, source);
    }

    @Override
    public boolean isDone(long ticket) {
        return delegate.isDone(ticket);
    }
}
