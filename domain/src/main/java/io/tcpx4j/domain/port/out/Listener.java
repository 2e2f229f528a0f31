package io.tcpx4j.domain.port.out;

/** A listening endpoint (ncclNet listenComm). */
public interface Listener {

    /** Size of every connection handle, as in NCCL_NET_HANDLE_MAXSIZE. */
    int HANDLE_SIZE = 128;

    /** The handle a peer passes to {@link NetTransport#connect(int, byte[])}: exactly 128 bytes (a copy). */
    byte[] handle();
}
