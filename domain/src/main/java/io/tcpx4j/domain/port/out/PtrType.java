package io.tcpx4j.domain.port.out;

/** Memory a transport can send from and receive into (NCCL_PTR_* bits). */
public enum PtrType {
    HOST(0x1),
    CUDA(0x2),
    DMABUF(0x4);

    private final int ncclBit;

    PtrType(int ncclBit) {
        this.ncclBit = ncclBit;
    }

    /** The NCCL_PTR_* value. */
    public int ncclBit() {
        return ncclBit;
    }
}
