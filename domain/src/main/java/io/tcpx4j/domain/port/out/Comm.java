package io.tcpx4j.domain.port.out;

/** A transport endpoint owned by the transport that created it. Opaque to the engine. */
public interface Comm {
}
