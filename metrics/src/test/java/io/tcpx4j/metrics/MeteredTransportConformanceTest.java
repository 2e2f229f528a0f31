package io.tcpx4j.metrics;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.tck.NetTransportConformanceTest;
import io.tcpx4j.tck.TckFaults;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;

/**
 * The metered decorator around the loopback transport against the conformance suite: wrapping comms,
 * listeners and requests keeps every rule of the SPI (FIFO tests, slots, close semantics, errors).
 */
class MeteredTransportConformanceTest extends NetTransportConformanceTest {

    private static LoopbackConfig config() {
        return LoopbackConfig.defaults().withIoThreads(1);
    }

    @Override
    protected NetTransport newTransport() {
        return new MeteredNetTransport(new LoopbackTransport(config()), new SimpleMeterRegistry());
    }

    @Override
    protected NetTransport newFaultyTransport(TckFaults f) {
        return new MeteredNetTransport(new LoopbackTransport(config().withFaults(
                new LoopbackConfig.Faults(f.dropAfterBytes(), f.completionDelay(), f.corruptHandle()))),
                new SimpleMeterRegistry());
    }
}
