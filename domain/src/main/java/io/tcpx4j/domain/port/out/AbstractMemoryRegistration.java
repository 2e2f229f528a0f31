package io.tcpx4j.domain.port.out;

/**
 * The immutable part every adapter's registration shares: the registered span and its type. Adapters
 * add what their transport needs (the owning comm, a native handle, a liveness flag).
 */
public abstract class AbstractMemoryRegistration implements MemoryRegistration {

    private final long address;
    private final long size;
    private final PtrType type;

    protected AbstractMemoryRegistration(long address, long size, PtrType type) {
        this.address = address;
        this.size = size;
        this.type = type;
    }

    @Override
    public final long address() {
        return address;
    }

    @Override
    public final long size() {
        return size;
    }

    @Override
    public final PtrType type() {
        return type;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + type + " 0x" + Long.toHexString(address) + "+" + size + "]";
    }
}
