package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

/** A registration on one comm. <b>Not thread-safe</b>: used by the comm's caller thread only. */
final class LoopbackRegistration implements MemoryRegistration {

    final LoopbackComm comm;
    private final long address;
    private final long size;
    private final PtrType type;
    boolean valid = true;

    LoopbackRegistration(LoopbackComm comm, long address, long size, PtrType type) {
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
        return "LoopbackRegistration[" + type + " 0x" + Long.toHexString(address) + "+" + size + "]";
    }
}
