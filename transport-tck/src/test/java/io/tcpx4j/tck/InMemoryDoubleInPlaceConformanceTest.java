package io.tcpx4j.tck;

import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;

/** {@link InMemoryDoubleConformanceTest}'s double with no capability declared: receives land in place. */
class InMemoryDoubleInPlaceConformanceTest extends NetTransportConformanceTest {

    private final InMemoryFabric fabric = new InMemoryFabric();

    @Override
    protected NetTransport newTransport() {
        return fabric.newTransport(InMemoryNetTransportDouble.Config.defaults().withCapabilities());
    }
}
