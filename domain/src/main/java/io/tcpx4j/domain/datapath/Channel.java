package io.tcpx4j.domain.datapath;

import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

/**
 * One data channel of a connection: a send comm to the peer and a receive comm from it, each with its
 * ring of posted requests.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class Channel {

    final int device;
    Listener listener;
    byte[] peerHandle;
    SendComm send;
    RecvComm recv;
    final RequestRing tx = new RequestRing();
    final RequestRing rx = new RequestRing();

    Channel(int device) {
        this.device = device;
    }

    boolean ready() {
        return send != null && recv != null;
    }

    /** Number of requests this channel holds on the transport (for window and leak checks). */
    int outstanding() {
        return tx.count() + rx.count();
    }
}
