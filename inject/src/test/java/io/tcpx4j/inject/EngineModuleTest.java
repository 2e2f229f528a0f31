package io.tcpx4j.inject;

import com.google.inject.AbstractModule;
import com.google.inject.Guice;
import com.google.inject.Injector;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class EngineModuleTest {

    /** Binds the in-memory transport double, as a transport module would bind a real one. */
    private static AbstractModule transportDouble(InMemoryFabric fabric) {
        return new AbstractModule() {
            @Override
            protected void configure() {
                bind(NetTransport.class).toInstance(fabric.newTransport());
            }
        };
    }

    @Test
    void anApplicationInjectsTwoEnginesAndMovesDataBetweenThem() throws Exception {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            Injector ia = Guice.createInjector(new EngineModule(EngineConfig.defaults("app-a")), transportDouble(fabric));
            Injector ib = Guice.createInjector(new EngineModule(EngineConfig.defaults("app-b")), transportDouble(fabric));
            EngineLifecycle la = ia.getInstance(EngineLifecycle.class);
            EngineLifecycle lb = ib.getInstance(EngineLifecycle.class);
            TransferEngine a = ia.getInstance(TransferEngine.class);
            TransferEngine b = ib.getInstance(TransferEngine.class);
            assertThat(a).isSameAs(ia.getInstance(TransferEngine.class));
            assertThat(ia.getInstance(DeviceMemory.class)).isInstanceOf(HostMemory.class);
            assertThat(ia.getInstance(ScatterGather.class)).isInstanceOf(CpuScatterGather.class);
            la.start();
            lb.start();
            long size = 3 * 1024 * 1024 + 5;
            long src = NativeMemory.allocate(size, 4096);
            long dst = NativeMemory.allocate(size, 4096);
            try {
                byte[] data = new byte[(int) size];
                new Random(3).nextBytes(data);
                NativeMemory.put(src, data, 0, data.length);
                a.register(MemoryDescriptor.dram(src, size));
                a.loadRemoteMetadata("app-b", b.register(MemoryDescriptor.dram(dst, size)).publicMetadata());
                a.loadPeer("app-b", b.connInfo());
                Transfer t = a.session("app-b").write(List.of(MemoryDescriptor.dram(src, size)),
                        List.of(MemoryDescriptor.dram(dst, size)), "landed".getBytes());
                assertThat(t.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
                byte[] got = new byte[(int) size];
                NativeMemory.get(dst, got, 0, got.length);
                assertThat(got).isEqualTo(data);
                List<Notification> notes = List.of();
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (notes.isEmpty() && System.nanoTime() < deadline) {
                    notes = b.drainNotifications();
                    Thread.sleep(1);
                }
                assertThat(notes).containsExactly(new Notification("app-a", "landed".getBytes()));
            } finally {
                la.stop();
                lb.stop();
                NativeMemory.free(src);
                NativeMemory.free(dst);
            }
        }
    }

    @Test
    void configureDoesNoIoAndTheEngineIsNotStartedByInjection() {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            Injector i = Guice.createInjector(new EngineModule(EngineConfig.defaults("idle")), transportDouble(fabric));
            TransferEngine e = i.getInstance(TransferEngine.class);
            org.assertj.core.api.Assertions.assertThatThrownBy(e::connInfo)
                    .hasMessageContaining("not started");
            i.getInstance(EngineLifecycle.class).stop();
        }
    }
}
