package io.tcpx4j.domain.port.out;

/**
 * Optional abilities a transport declares. The conformance suite tests each declared one and checks
 * that each undeclared one fails with {@code NOT_SUPPORTED}.
 */
public enum Capability {
    /** Sends from and receives into CUDA memory. */
    CUDA_MEMORY,
    /** Receives into CUDA memory (or, in a test mode, any memory) land in bounce pages as fragments. */
    DEVMEM_RECEIVE,
    /** Faults can be injected (drop after N bytes, delay, corrupt handle). */
    FAULT_INJECTION
}
