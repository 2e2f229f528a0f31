package io.tcpx4j.domain.registration;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.RegisteredMemory;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A region registered with the engine. Transfers pin it ({@link #acquire()}) for as long as they may
 * touch it, so deregistration never pulls memory from under a posted request.
 *
 * <p>Thread-safe.
 */
public final class LocalRegion implements RegisteredMemory {

    /** Who takes the region back when the application closes it. */
    interface Owner {
        void deregister(LocalRegion region);
    }

    private final Owner owner;
    public final MemoryDescriptor range;
    public final RegistrationGroup group;
    private final byte[] metadata;
    private final AtomicInteger inflight = new AtomicInteger();
    private volatile boolean closed;

    public LocalRegion(Owner owner, MemoryDescriptor range, RegistrationGroup group, byte[] metadata) {
        this.owner = owner;
        this.range = range;
        this.group = group;
        this.metadata = metadata;
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
    public boolean acquire() {
        inflight.incrementAndGet();
        if (closed) {
            inflight.decrementAndGet();
            return false;
        }
        return true;
    }

    public void releaseRef() {
        inflight.decrementAndGet();
    }

    /** Unpins every non-null region of {@code regions} (null itself is allowed). */
    public static void releaseAll(LocalRegion[] regions) {
        if (regions != null) {
            for (LocalRegion r : regions) {
                if (r != null) {
                    r.releaseRef();
                }
            }
        }
    }

    /** Whether every region of {@code regions} is host memory. */
    public static boolean allHost(LocalRegion[] regions) {
        for (LocalRegion r : regions) {
            if (r.range.kind() != MemoryKind.DRAM) {
                return false;
            }
        }
        return true;
    }

    /** The kind of memory every region of {@code regions} is, or null if they mix kinds (DRAM for none). */
    public static MemoryKind oneKind(LocalRegion[] regions) {
        MemoryKind kind = regions.length == 0 ? MemoryKind.DRAM : regions[0].range.kind();
        for (LocalRegion r : regions) {
            if (r.range.kind() != kind) {
                return null;
            }
        }
        return kind;
    }

    public int inflight() {
        return inflight.get();
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (owner != null) {
                owner.deregister(this);
            }
        }
    }

    @Override
    public String toString() {
        return "RegisteredMemory[" + range + "]";
    }
}
