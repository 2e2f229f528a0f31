package io.tcpx4j.domain.agent;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Progress;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.peer.EngineContext;
import io.tcpx4j.domain.peer.LocalIdentity;
import io.tcpx4j.domain.peer.PeerRoster;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.registration.RegionRegistry;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * How a driver of a {@link ProgressAgent} waits between cycles: a command queued since its last cycle
 * sends it back to work at once, neither blocking nor parking (a park costs the thread's timer slack
 * before the command runs); with nothing queued it blocks until a command wakes it. Each wait asks for ten
 * minutes, so only the rule under test can end it within the test's bound.
 */
class ProgressAgentWaitTest {

    private static final long TEN_MINUTES_MILLIS = 600_000;
    private static final Duration BOUND = Duration.ofSeconds(30);

    private InMemoryFabric fabric;
    private CommandQueue commands;
    private ProgressAgent agent;

    @BeforeEach
    void callerDrivenAgent() {
        fabric = new InMemoryFabric();
        EngineConfig config = EngineConfig.from(io.tcpx4j.api.EngineConfig.defaults("waiter")
                .withProgress(Progress.defaults().withDriver(Progress.Driver.CALLER)));
        commands = new CommandQueue("waiter");
        RegionRegistry registry = new RegionRegistry("waiter", new HostMemory(), commands);
        EngineContext ctx = new EngineContext(new LocalIdentity("waiter"), config, fabric.newTransport(),
                new CpuScatterGather(), Clock.SYSTEM, registry, new PeerRoster(), 0);
        agent = new ProgressAgent(ctx, commands, new ConcurrentLinkedQueue<Notification>(), () -> { });
        agent.start();
    }

    @AfterEach
    void close() {
        agent.close(1_000);
        fabric.close();
    }

    @Test
    void aQueuedCommandEndsTheWaitAtOnceAsAnEventNotAsAPoll() {
        AtomicInteger ran = new AtomicInteger();
        commands.execute(ran::incrementAndGet);
        boolean event = assertTimeoutPreemptively(BOUND, () -> agent.awaitEvent(TEN_MINUTES_MILLIS));
        assertThat(event).as("true: go on now; false would make the driver park before the next cycle").isTrue();
        assertThat(agent.blocks()).as("waits that blocked").isZero();
        assertThat(ran).as("waiting runs no command; the next cycle does").hasValue(0);
        assertThat(agent.doWork()).isPositive();
        assertThat(ran).hasValue(1);
    }

    @Test
    void withNothingQueuedTheDriverBlocksUntilACommandWakesIt() throws Exception {
        Thread poster = new Thread(() -> {
            while (agent.blocks() == 0) {
                Thread.onSpinWait();
            }
            commands.execute(() -> { });
        }, "poster");
        poster.setDaemon(true);
        poster.start();
        boolean event = assertTimeoutPreemptively(BOUND, () -> agent.awaitEvent(TEN_MINUTES_MILLIS));
        assertThat(event).isTrue();
        assertThat(agent.blocks()).as("waits that blocked").isEqualTo(1);
        poster.join(BOUND.toMillis());
    }
}
