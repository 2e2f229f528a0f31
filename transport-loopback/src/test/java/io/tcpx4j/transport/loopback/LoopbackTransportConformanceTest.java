package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.tck.NetTransportConformanceTest;
import io.tcpx4j.tck.TckFaults;

/** The loopback transport, devmem mode on (every receive is unpacked), against the conformance suite. */
class LoopbackTransportConformanceTest extends NetTransportConformanceTest {

    static LoopbackConfig testConfig() {
        return LoopbackConfig.defaults().withIoThreads(1);
    }

    /** The settings of every transport this suite makes (faults aside). */
    LoopbackConfig config() {
        return testConfig();
    }

    @Override
    protected NetTransport newTransport() {
        return new LoopbackTransport(config());
    }

    @Override
    protected NetTransport newFaultyTransport(TckFaults f) {
        return new LoopbackTransport(config().withFaults(
                new LoopbackConfig.Faults(f.dropAfterBytes(), f.completionDelay(), f.corruptHandle())));
    }
}
