package io.tcpx4j.transport.tcpx;

import io.tcpx4j.domain.port.out.AbstractMemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

/** A plugin memory handle (regMr's mhandle) on one comm. <b>Not thread-safe</b>: owned by its comm's thread. */
final class TcpxRegistration extends AbstractMemoryRegistration {

    final TcpxComm comm;
    final long mhandle;
    boolean released;

    TcpxRegistration(TcpxComm comm, long mhandle, long address, long size, PtrType type) {
        super(address, size, type);
        this.comm = comm;
        this.mhandle = mhandle;
    }
}
