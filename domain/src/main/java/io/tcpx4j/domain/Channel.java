package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

/**
 * One data channel of a connection: a send comm to the peer and a receive comm from it, each with a
 * FIFO ring of posted requests. Slots are preallocated, so posting a chunk allocates nothing.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class Channel {

    static final int RING = NetTransport.MAX_REQUESTS;

    final int index;
    final int device;
    Listener listener;
    byte[] peerHandle;
    SendComm send;
    RecvComm recv;

    // sends: [txHead, txHead + txCount) posted, tested strictly from the head
    final OutOp[] txOp = new OutOp[RING];
    final NetRequest[] txReq = new NetRequest[RING];
    int txHead;
    int txCount;

    // receives: [rxHead, rxHead + rxDone) completed and waiting for unpack + consume, then posted ones
    final InOp[] rxOp = new InOp[RING];
    final NetRequest[] rxReq = new NetRequest[RING];
    final long[] rxDst = new long[RING];
    final MemoryKind[] rxKind = new MemoryKind[RING];
    final long[] rxTicket = new long[RING];
    final boolean[] rxPendingTicket = new boolean[RING];
    int rxHead;
    int rxCount;
    int rxDone;

    Channel(int index, int device) {
        this.index = index;
        this.device = device;
    }

    boolean ready() {
        return send != null && recv != null;
    }

    static int slot(int head, int i) {
        return (head + i) & (RING - 1);
    }

    /** Number of requests this channel holds on the transport (for window and leak checks). */
    int outstanding() {
        return txCount + rxCount;
    }
}
