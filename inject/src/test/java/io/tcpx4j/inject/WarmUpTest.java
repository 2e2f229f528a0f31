package io.tcpx4j.inject;

import com.google.inject.AbstractModule;
import com.google.inject.Guice;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.Progress;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.EngineStats;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import com.google.inject.multibindings.OptionalBinder;
import io.tcpx4j.domain.testing.InMemoryFabric;
import io.tcpx4j.domain.warmup.WarmUp;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WarmUpTest {

    private static EngineLifecycle lifecycle(InMemoryFabric fabric, EngineModule module) {
        return Guice.createInjector(module, new AbstractModule() {
            @Override
            protected void configure() {
                bind(NetTransport.class).toInstance(fabric.newTransport());
            }
        }).getInstance(EngineLifecycle.class);
    }

    private static Set<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .collect(Collectors.toSet());
    }

    @Test
    void startRunsThePlannedTransfersOnPrivateEnginesAndLeavesTheApplicationsEngineAlone() throws Exception {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            EngineLifecycle life = lifecycle(fabric, new EngineModule(EngineConfig.defaults("app").withWarmUp(400)));
            try {
                TransferEngine engine = life.start();
                WarmUp.Result r = life.warmUp().await(Duration.ofSeconds(60));
                assertThat(r).as("warm-up ended").isNotNull();
                assertThat(r.stoppedBecause()).isNull();
                assertThat(r.transfers()).isEqualTo(400);
                EngineStats stats = engine.stats();
                assertThat(stats.connections()).as("the application's engine made no connection").isZero();
                assertThat(stats.registeredRegions()).as("nor registered memory").isZero();
                assertThat(threadNames()).as("the warm-up's threads are gone once it ended")
                        .noneMatch(n -> n.contains("warm-up") || n.equals("tcpx4j-warmup"));
            } finally {
                life.stop();
            }
        }
    }

    @Test
    void anApplicationThatDrivesItsEngineItselfStillGetsAWholeWarmUp() throws Exception {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            EngineConfig config = EngineConfig.defaults("app").withWarmUp(400)
                    .withProgress(Progress.defaults().withDriver(Progress.Driver.CALLER));
            EngineLifecycle life = lifecycle(fabric, new EngineModule(config));
            try {
                life.start();
                WarmUp.Result r = life.warmUp().await(Duration.ofSeconds(60));
                assertThat(r).as("warm-up ended").isNotNull();
                assertThat(r.stoppedBecause()).as("every planned transfer ran").isNull();
                assertThat(r.transfers()).isEqualTo(400);
            } finally {
                life.stop();
            }
        }
    }

    /** A CPU scatter-gather that counts its own calls and keeps the ones {@link #another()} made. */
    static final class CountingScatterGather implements ScatterGather {
        final CpuScatterGather cpu = new CpuScatterGather();
        final AtomicInteger calls = new AtomicInteger();
        final List<CountingScatterGather> made = new CopyOnWriteArrayList<>();
        volatile boolean closed;

        @Override
        public void add(NetRequest request, long destination, MemoryKind destinationKind) {
            calls.incrementAndGet();
            cpu.add(request, destination, destinationKind);
        }

        @Override
        public void add(NetRequest request, long[] addresses, long[] lengths, int first, int end, MemoryKind kind) {
            calls.incrementAndGet();
            cpu.add(request, addresses, lengths, first, end, kind);
        }

        @Override
        public void copy(long source, long destination, long length, MemoryKind kind) {
            calls.incrementAndGet();
            cpu.copy(source, destination, length, kind);
        }

        @Override
        public long submit() {
            calls.incrementAndGet();
            return cpu.submit();
        }

        @Override
        public boolean isDone(long ticket) {
            return cpu.isDone(ticket);
        }

        @Override
        public ScatterGather another() {
            CountingScatterGather c = new CountingScatterGather();
            made.add(c);
            return c;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    @Test
    void eachPrivateEngineDrivesAScatterGatherOfItsOwnAndTheWarmUpClosesThem() throws Exception {
        CountingScatterGather applications = new CountingScatterGather();
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            EngineLifecycle life = Guice.createInjector(new EngineModule(EngineConfig.defaults("app")
                    .withWarmUp(400)), new AbstractModule() {
                        @Override
                        protected void configure() {
                            bind(NetTransport.class).toInstance(fabric.newTransport());
                            OptionalBinder.newOptionalBinder(binder(), ScatterGather.class).setBinding()
                                    .toInstance(applications);
                        }
                    }).getInstance(EngineLifecycle.class);
            try {
                life.start();
                WarmUp.Result r = life.warmUp().await(Duration.ofSeconds(60));
                assertThat(r).isNotNull();
                assertThat(r.transfers()).isEqualTo(400);
                assertThat(applications.calls).as("the application's own scatter-gather is not the warm-up's")
                        .hasValue(0);
                assertThat(applications.made).hasSize(2).allMatch(c -> c.closed);
                assertThat(applications.made.stream().mapToInt(c -> c.calls.get()).sum())
                        .as("the private engines moved their bytes through theirs").isPositive();
            } finally {
                life.stop();
            }
            assertThat(applications.closed).isTrue();
        }
    }

    @Test
    void stopEndsARunningWarmUpAndReleasesItsEngines() throws Exception {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            EngineLifecycle life = lifecycle(fabric,
                    new EngineModule(EngineConfig.defaults("app").withWarmUp(EngineConfig.MAX_WARM_UP_TRANSFERS)));
            life.start();
            WarmUp w = life.warmUp();
            life.stop();
            WarmUp.Result r = w.await(Duration.ZERO);
            assertThat(r).as("stop waited for the warm-up to end").isNotNull();
            assertThat(r.transfers()).isLessThan(EngineConfig.MAX_WARM_UP_TRANSFERS);
            assertThat(r.stoppedBecause()).isEqualTo("closed");
            assertThat(threadNames()).noneMatch(n -> n.contains("warm-up") || n.equals("tcpx4j-warmup"));
        }
    }

    @Test
    void aConfigurationWithoutWarmUpRunsNone() {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            EngineLifecycle life = lifecycle(fabric, new EngineModule(EngineConfig.defaults("app")));
            try {
                life.start();
                assertThat(life.warmUp()).isNull();
            } finally {
                life.stop();
            }
        }
    }

    @Test
    void aWarmUpOutsideItsRangeIsRefused() {
        assertThatThrownBy(() -> EngineConfig.defaults("app").withWarmUp(-1)).isInstanceOf(TransferException.class)
                .hasMessageContaining("0..");
        assertThatThrownBy(() -> EngineConfig.defaults("app").withWarmUp(EngineConfig.MAX_WARM_UP_TRANSFERS + 1))
                .isInstanceOf(TransferException.class);
    }
}
