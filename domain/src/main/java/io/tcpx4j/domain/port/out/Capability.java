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
    FAULT_INJECTION,
    /**
     * {@link NetTransport#wakeOnProgress} works: the transport calls the registered wake-ups for every
     * event that can move a request, comm, connect or accept on, so that an engine with requests out may
     * block until woken. A transport that completes requests only inside {@link NetTransport#test} (TCPX)
     * does not declare it and is polled while it holds requests. Declared for the whole transport.
     */
    PROGRESS_WAKEUPS
}
