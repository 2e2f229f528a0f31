package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

/** A registration on one comm. <b>Not thread-safe</b>: used by the comm's caller thread only. */
final class LoopbackRegistration implements MemoryRegistration {

    final LoopbackComm comm;
    private final long address;
    private final long size;
    private final PtrType type;
    /** GPU ordinal of CUDA memory on a GPU host (staging copies run on its stream); 0 otherwise. */
    final int device;
    boolean valid = true;

    LoopbackRegistration(LoopbackComm comm, long address, long size, PtrType type, int device) {
        this.comm = comm;
        this.address = address;
        this.size = size;
        this.type = type;
        this.device = device;
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
