package io.tcpx4j.domain.lifecycle;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferEngines;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.api.Transport;
import io.tcpx4j.domain.HostAsVramDouble;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Engines built and started by the api's plain factory, which finds this module's {@link DomainEngineProvider}
 * through ServiceLoader, owning and closing what they were given.
 */
class TransferEnginesTest {

    /** What the doubles below saw closed, in order. */
    private final List<String> closed = new CopyOnWriteArrayList<>();

    /** Test double: the fabric's transport, noting whether it was closed. */
    private static final class WatchedTransport extends ForwardingNetTransport {
        volatile boolean closed;

        WatchedTransport(NetTransport delegate) {
            super(delegate);
        }

        @Override
        public void close() {
            closed = true;
            super.close();
        }
    }

    /** Test double: {@code delegate} behind {@code type}, noting its close under {@code name}. */
    private <T> T watched(Class<T> type, T delegate, String name) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (method.getName().equals("close") && method.getParameterCount() == 0) {
                closed.add(name);
            }
            try {
                return method.invoke(delegate, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }));
    }

    @Test
    void theApiFactoryFindsThisModulesProvider() {
        try (InMemoryFabric fabric = new InMemoryFabric();
             TransferEngine e = TransferEngines.create(EngineConfig.defaults("app"), fabric.newTransport())) {
            assertThat(e.getClass()).isEqualTo(OwningEngine.class);
        }
    }

    @Test
    void twoEnginesWithoutAnInjectorMoveBytesNotifyAListenerAndCloseTheirTransports() throws Exception {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            WatchedTransport ta = new WatchedTransport(fabric.newTransport());
            WatchedTransport tb = new WatchedTransport(fabric.newTransport());
            TransferEngine a = TransferEngines.create(EngineConfig.defaults("app-a"), ta);
            TransferEngine b = TransferEngines.create(EngineConfig.defaults("app-b"), tb);
            BlockingQueue<Notification> heard = new LinkedBlockingQueue<>();
            b.onNotification(heard::add);
            int size = 1 << 20;
            long src = NativeMemory.allocate(size, 4096);
            long dst = NativeMemory.allocate(size, 4096);
            try {
                byte[] data = new byte[size];
                new Random(7).nextBytes(data);
                NativeMemory.put(src, data, 0, size);
                a.register(MemoryDescriptor.dram(src, size));
                a.loadRemoteMetadata("app-b", b.register(MemoryDescriptor.dram(dst, size)).publicMetadata());
                a.loadPeer("app-b", b.connInfo());
                Transfer t = a.session("app-b").write(List.of(MemoryDescriptor.dram(src, size)),
                        List.of(MemoryDescriptor.dram(dst, size)), "landed".getBytes());
                assertThat(t.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
                byte[] got = new byte[size];
                NativeMemory.get(dst, got, 0, size);
                assertThat(got).isEqualTo(data);
                assertThat(heard.poll(10, TimeUnit.SECONDS)).isEqualTo(new Notification("app-a", "landed".getBytes()));
                assertThat(b.drainNotifications()).isEmpty();
                assertThat(a.stats().connections()).isEqualTo(1);
                assertThat(b.stats().registeredRegions()).isEqualTo(1);

                a.close();
                assertThat(ta.closed).as("closing the engine closed its transport").isTrue();
                assertThat(tb.closed).isFalse();
                assertThatThrownBy(() -> a.session("app-b")).isInstanceOf(TransferException.class);
            } finally {
                a.close();
                b.close();
                NativeMemory.free(src);
                NativeMemory.free(dst);
            }
            assertThat(tb.closed).isTrue();
        }
    }

    @Test
    void theGpuVariantMovesDeviceMemoryAndClosesTransportScatterGatherAndMemoryInThatOrder() throws Exception {
        int size = 256 * 1024;
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            HostAsVramDouble vramA = new HostAsVramDouble();
            HostAsVramDouble vramB = new HostAsVramDouble();
            TransferEngine a = TransferEngines.create(EngineConfig.defaults("gpu-a"),
                    watched(NetTransport.class, fabric.newTransport(), "transport"),
                    watched(DeviceMemory.class, vramA, "memory"),
                    watched(ScatterGather.class, new HostAsVramDouble.Unpacking(), "scatterGather"));
            MemoryDescriptor src = vramA.allocate(MemoryKind.VRAM, size, 0);
            MemoryDescriptor dst = vramB.allocate(MemoryKind.VRAM, size, 0);
            try (TransferEngine b = TransferEngines.create(EngineConfig.defaults("gpu-b"), fabric.newTransport(),
                    vramB, new HostAsVramDouble.Unpacking())) {
                byte[] data = new byte[size];
                new Random(11).nextBytes(data);
                NativeMemory.put(src.address(), data, 0, size);
                a.register(src);
                a.loadRemoteMetadata("gpu-b", b.register(dst).publicMetadata());
                a.loadPeer("gpu-b", b.connInfo());
                Transfer t = a.session("gpu-b").write(List.of(src), List.of(dst), null);
                assertThat(t.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
                byte[] got = new byte[size];
                NativeMemory.get(dst.address(), got, 0, size);
                assertThat(got).isEqualTo(data);

                assertThat(closed).isEmpty();
                a.close();
                assertThat(closed).containsExactly("transport", "scatterGather", "memory");
            } finally {
                a.close();
                vramA.free(src);
                vramB.free(dst);
            }
        }
    }

    @Test
    void aTransportMadeForAnotherEngineIsRefusedAndClosedWithWhatCameWithIt() {
        Transport foreign = new Transport() {
            @Override
            public String name() {
                return "foreign";
            }

            @Override
            public void close() {
                closed.add("transport");
            }
        };
        assertThatThrownBy(() -> TransferEngines.create(EngineConfig.defaults("app"), foreign,
                watched(DeviceMemory.class, new HostMemory(), "memory"),
                watched(ScatterGather.class, new CpuScatterGather(), "scatterGather")))
                .isInstanceOfSatisfying(TransferException.class,
                        e -> assertThat(e.code()).isEqualTo(TransferException.Code.INVALID_PARAM))
                .hasMessageContaining(foreign.getClass().getName())
                .hasMessageContaining("is not a " + NetTransport.class.getName());
        assertThat(closed).containsExactly("transport", "scatterGather", "memory");
    }

    @Test
    void closeEndsARunningWarmUpFirst() {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            WatchedTransport transport = new WatchedTransport(fabric.newTransport());
            TransferEngine e = TransferEngines.create(
                    EngineConfig.defaults("app").withWarmUp(EngineConfig.MAX_WARM_UP_TRANSFERS), transport);
            assertThat(e.connInfo()).isNotEmpty();
            e.close();
            assertThat(transport.closed).isTrue();
            assertThat(Thread.getAllStackTraces().keySet()).filteredOn(Thread::isAlive)
                    .extracting(Thread::getName).noneMatch(n -> n.equals("tcpx4j-warmup"));
        }
    }

    @Test
    void anEngineThatCannotStartClosesWhatItWasGiven() throws Exception {
        try (InMemoryFabric fabric = new InMemoryFabric();
             ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            WatchedTransport transport = new WatchedTransport(fabric.newTransport());
            EngineConfig config = EngineConfig.defaults("app").withListen("127.0.0.1", taken.getLocalPort());
            assertThatThrownBy(() -> TransferEngines.create(config, transport)).isInstanceOf(RuntimeException.class);
            assertThat(transport.closed).isTrue();
        }
    }
}
