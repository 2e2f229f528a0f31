package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.NetRequest;

/**
 * A pooled view of one plugin request (the {@code void*} isend/irecv returned). Each comm owns 16 and
 * reuses them in FIFO order, so posting allocates nothing. <b>Not thread-safe</b>.
 */
final class TcpxNetRequest implements NetRequest {

    enum State { FREE, POSTED, COMPLETED }

    final TcpxComm comm;
    long pointer;
    int size;
    boolean receive;
    boolean cuda;
    State state = State.FREE;
    int fragmentCount;
    long fragmentsAddress;

    TcpxNetRequest(TcpxComm comm) {
        this.comm = comm;
    }

    void post(long pointer, int size, boolean receive, boolean cuda) {
        this.pointer = pointer;
        this.size = size;
        this.receive = receive;
        this.cuda = cuda;
        this.state = State.POSTED;
        this.fragmentCount = 0;
        this.fragmentsAddress = 0;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int fragmentCount() {
        return fragmentCount;
    }

    @Override
    public long fragmentsAddress() {
        return fragmentsAddress;
    }

    @Override
    public long bounceBase() {
        return comm.bounceBase;
    }

    @Override
    public long bounceBytes() {
        return comm.bounceBytes;
    }

    @Override
    public MemoryKind bounceKind() {
        return comm.bounceKind;
    }

    @Override
    public String toString() {
        return (receive ? "irecv " : "isend ") + size + "B " + state + " @0x" + Long.toHexString(pointer);
    }
}
