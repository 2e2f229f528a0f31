package io.tcpx4j.domain.testing;

import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

/**
 * A registration bound to one comm of an {@link InMemoryNetTransportDouble}.
 *
 * <p><b>Not thread-safe</b>: mutable state is guarded by the lock of its comm's {@link CommPair}.
 */
final class DoubleRegistration implements MemoryRegistration {

    final DoubleComm comm;
    private final long address;
    private final long size;
    private final PtrType type;
    boolean alive = true;
    /** Requests posted with this registration that have not been released yet. */
    int inFlight;

    DoubleRegistration(DoubleComm comm, long address, long size, PtrType type) {
        this.comm = comm;
        this.address = address;
        this.size = size;
        this.type = type;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public PtrType type() {
        return type;
    }


    @Override
    public String toString() {
        return "DoubleRegistration[" + type + " 0x" + Long.toHexString(address) + " +" + size + " on " + comm + "]";
    }
}
