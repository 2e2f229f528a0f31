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
    PROGRESS_WAKEUPS,
    /**
     * The transport moves the bytes of a comm only inside calls made by the thread that drives it
     * ({@link NetTransport#connect}, {@link NetTransport#accept}, {@link NetTransport#isend},
     * {@link NetTransport#irecv}, {@link NetTransport#test}) and inside the handlers it registers with the
     * {@link DriverSelector} given to {@link NetTransport#listen(int, DriverSelector)} and
     * {@link NetTransport#connect(int, byte[], DriverSelector)}: it runs no thread of its own. Every socket
     * that can move a request, a connect or an accept on is registered there, and a request that completes
     * inside a call wakes the selector, so a driver may block on it while requests are out. Made without a
     * selector, comms still make progress in those calls. Declared for the whole transport.
     */
    DRIVER_SOCKETS
}
