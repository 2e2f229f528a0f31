package io.tcpx4j.nixl;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.testing.InMemoryFabric;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;
import org.junit.jupiter.api.AfterEach;

import java.time.Duration;

/**
 * The contract against the real {@link Engine} (its progress thread, control protocol, chunking and
 * windows) over the domain's in-memory transport double, which is as strict as TCPX about slots,
 * FIFO completion and devmem fragments.
 */
class NixlBackendOverEngineTest extends NixlBackendContract {

    private final InMemoryFabric fabric = new InMemoryFabric();

    @Override
    NixlBackend newBackend(String name) {
        InMemoryNetTransportDouble transport = fabric.newTransport();
        EngineConfig config = EngineConfig.defaults(name)
                .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofMillis(200))
                .withAgents(progressAgents());
        Engine engine = new Engine(io.tcpx4j.domain.EngineConfig.from(config), transport, new HostMemory(),
                new CpuScatterGather(), Clock.SYSTEM);
        engine.start();
        return new NixlBackend(engine, () -> {
            engine.close();
            transport.close();
        }, CostModel.DEFAULT);
    }

    /** The engines' progress agents. */
    int progressAgents() {
        return 1;
    }

    @Override
    int bigTransferBytes() {
        return 64 * MIB;
    }

    @AfterEach
    void closeFabric() {
        fabric.close();
    }
}
