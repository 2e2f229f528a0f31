package io.tcpx4j.nixl;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.testing.InMemoryFabric;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A host polls getNotifs and checkXfer in a loop, most calls finding nothing: such a call allocates
 * nothing on the Java heap, so that the polling itself brings no garbage collections.
 */
class NixlBackendPollAllocationTest {

    private static final int CALLS = 200_000;

    @Test
    void pollsThatFindNothingAllocateNothing() {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        assumeTrue(mx instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported(),
                "this JVM does not count the bytes a thread allocates");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) mx;
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            InMemoryNetTransportDouble transport = fabric.newTransport();
            Engine engine = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("A")), transport,
                    new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
            engine.startManual();
            NixlBackend backend = new NixlBackend(engine, () -> {
                engine.close();
                transport.close();
            }, CostModel.DEFAULT, true);
            try {
                byte[][] out = new byte[1][];
                poll(backend, out, CALLS); // compiled by the JIT before counting
                long id = Thread.currentThread().getId();
                long before = threads.getThreadAllocatedBytes(id);
                poll(backend, out, CALLS);
                long perCall = (threads.getThreadAllocatedBytes(id) - before) / CALLS;

                assertThat(NixlBackend.unpackNotifications(out[0])).isEmpty();
                assertThat(perCall).as("bytes allocated per polling call").isLessThan(4);
            } finally {
                backend.close();
            }
        }
    }

    private static void poll(NixlBackend backend, byte[][] out, int calls) {
        for (int i = 0; i < calls; i++) {
            if (backend.getNotifs(out) != NixlStatus.SUCCESS) {
                throw new AssertionError("a poll failed");
            }
        }
    }
}
