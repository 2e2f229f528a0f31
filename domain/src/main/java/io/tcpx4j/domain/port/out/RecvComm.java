package io.tcpx4j.domain.port.out;

/** The receiving half of a channel (ncclNet recvComm). */
public interface RecvComm extends Comm {
}
