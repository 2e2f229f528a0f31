package io.tcpx4j.transport.tcpx;

import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

/** A plugin memory handle (regMr's mhandle) on one comm. <b>Not thread-safe</b>: owned by its comm's thread. */
final class TcpxRegistration implements MemoryRegistration {

    final TcpxComm comm;
    final long mhandle;
    private final long address;
    private final long size;
    private final PtrType type;
    boolean released;

    TcpxRegistration(TcpxComm comm, long mhandle, long address, long size, PtrType type) {
        this.comm = comm;
        this.mhandle = mhandle;
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
        return type + " 0x" + Long.toHexString(address) + "+" + size;
    }
}
