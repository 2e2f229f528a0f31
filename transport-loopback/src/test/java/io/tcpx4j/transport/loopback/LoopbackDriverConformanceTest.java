package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.tck.NetTransportConformanceTest;
import io.tcpx4j.tck.TckFaults;

/**
 * The loopback transport without I/O threads ({@code ioThreads} 0: bytes move inside the caller's calls and
 * its selector's handlers) against the conformance suite, devmem mode on.
 */
class LoopbackDriverConformanceTest extends NetTransportConformanceTest {

    static LoopbackConfig testConfig() {
        return LoopbackConfig.defaults().withIoThreads(0);
    }

    @Override
    protected NetTransport newTransport() {
        return new LoopbackTransport(testConfig());
    }

    @Override
    protected NetTransport newFaultyTransport(TckFaults f) {
        return new LoopbackTransport(testConfig().withFaults(
                new LoopbackConfig.Faults(f.dropAfterBytes(), f.completionDelay(), f.corruptHandle())));
    }
}
