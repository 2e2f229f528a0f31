package io.tcpx4j.nixl;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.testing.InMemoryFabric;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code progress=inline}: the calls a NIXL host polls with lend their thread to the engine
 * ({@link TransferEngine#progress()}); {@code progress=thread} leaves the work to the engine's thread.
 * That transfers complete in the hybrid mode is the contract's business ({@link NixlBackendOverEngineTest}).
 */
class NixlBackendInlineProgressTest {

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void checkXferAndGetNotifsRunTheEnginesProgressOnlyWhenInline(boolean inline) {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            InMemoryNetTransportDouble transport = fabric.newTransport();
            Engine engine = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("A")), transport,
                    new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
            engine.startManual();
            AtomicInteger progressCalls = new AtomicInteger();
            TransferEngine counting = (TransferEngine) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {TransferEngine.class}, (proxy, method, args) -> {
                        if (method.getName().equals("progress")) {
                            progressCalls.incrementAndGet();
                        }
                        try {
                            return method.invoke(engine, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            NixlBackend backend = new NixlBackend(counting, () -> {
                engine.close();
                transport.close();
            }, CostModel.DEFAULT, inline);
            try {
                assertThat(backend.getNotifs(new byte[1][])).isEqualTo(NixlStatus.SUCCESS);
                assertThat(backend.checkXfer(12345)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
                assertThat(progressCalls.get()).isEqualTo(inline ? 2 : 0);
            } finally {
                backend.close();
            }
        }
    }
}
