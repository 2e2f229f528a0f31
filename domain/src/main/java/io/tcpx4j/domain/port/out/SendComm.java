package io.tcpx4j.domain.port.out;

/** The sending half of a channel (ncclNet sendComm). */
public interface SendComm extends Comm {
}
