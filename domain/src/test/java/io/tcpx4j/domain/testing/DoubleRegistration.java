package io.tcpx4j.domain.testing;

import io.tcpx4j.domain.port.out.AbstractMemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

/**
 * A registration bound to one comm of an {@link InMemoryNetTransportDouble}.
 *
 * <p><b>Not thread-safe</b>: mutable state is guarded by the lock of its comm's {@link CommPair}.
 */
final class DoubleRegistration extends AbstractMemoryRegistration {

    final DoubleComm comm;
    boolean alive = true;
    /** Requests posted with this registration that have not been released yet. */
    int inFlight;

    DoubleRegistration(DoubleComm comm, long address, long size, PtrType type) {
        super(address, size, type);
        this.comm = comm;
    }

    @Override
    public String toString() {
        return super.toString() + " on " + comm;
    }
}
