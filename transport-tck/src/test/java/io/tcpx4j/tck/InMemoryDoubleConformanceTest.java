package io.tcpx4j.tck;

import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;

/**
 * The domain's test double, {@link InMemoryNetTransportDouble}, against the conformance suite: the
 * engine's own tests run over it, so it must keep the SPI contract as strictly as a real transport.
 * Here every receive lands in bounce pages (devmem); {@link InMemoryDoubleInPlaceConformanceTest}
 * runs it with receives landing in place. It
 * declares neither CUDA memory (it has no GPU; its fake-VRAM rules are its own test's) nor fault
 * injection (its faults are the fabric's, {@link InMemoryFabric#dropAfterBytes} and
 * {@link InMemoryFabric#breakConnection}, also tested there), so the suite checks that both are
 * refused with NOT_SUPPORTED.
 */
class InMemoryDoubleConformanceTest extends NetTransportConformanceTest {

    private final InMemoryFabric fabric = new InMemoryFabric();

    @Override
    protected NetTransport newTransport() {
        return fabric.newTransport(InMemoryNetTransportDouble.Config.defaults()
                .withCapabilities(Capability.DEVMEM_RECEIVE));
    }
}
