package io.tcpx4j.transport.loopback;

/**
 * The loopback transport without I/O threads ({@code ioThreads} 0: bytes move inside the caller's calls and
 * its selector's handlers) against the conformance suite, devmem mode on.
 */
class LoopbackDriverConformanceTest extends LoopbackTransportConformanceTest {

    @Override
    LoopbackConfig config() {
        return LoopbackConfig.defaults().withIoThreads(0);
    }
}
