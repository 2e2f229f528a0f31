package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.port.out.AbstractMemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

/** A registration on one comm. <b>Not thread-safe</b>: used by the comm's caller thread only. */
final class LoopbackRegistration extends AbstractMemoryRegistration {

    final LoopbackComm comm;
    /** GPU ordinal of CUDA memory on a GPU host (staging copies run on its stream); 0 otherwise. */
    final int device;
    boolean valid = true;

    LoopbackRegistration(LoopbackComm comm, long address, long size, PtrType type, int device) {
        super(address, size, type);
        this.comm = comm;
        this.device = device;
    }
}
