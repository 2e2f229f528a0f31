package io.tcpx4j.domain.port.out;

/** A memory registration on one comm (ncclNet mhandle). Valid until deregistered or the comm closes. */
public interface MemoryRegistration {

    long address();

    long size();

    PtrType type();
}
