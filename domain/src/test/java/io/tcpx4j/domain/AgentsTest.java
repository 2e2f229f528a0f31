package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.testing.InMemoryFabric;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An engine with several progress agents: each serves the peers whose names hash to it, through a
 * control listener of its own that conn-info lists; registrations made on the comms of every agent go
 * when their region is deregistered; a dial that reaches the wrong agent is refused with a reason.
 */
class AgentsTest {

    private static final int SIZE = 3 * EngineConfig.DEFAULT_CHUNK + 777;

    private final InMemoryFabric fabric = new InMemoryFabric();
    private final List<InMemoryNetTransportDouble> transports = new ArrayList<>();
    private final List<Engine> engines = new ArrayList<>();
    private final List<Long> buffers = new ArrayList<>();

    @AfterEach
    void close() {
        engines.forEach(Engine::close);
        transports.forEach(InMemoryNetTransportDouble::close);
        fabric.close();
        buffers.forEach(NativeMemory::free);
    }

    @Test
    void connInfoListsAControlPortPerAgentAndAFixedPortCountsUpFromListenPort() throws IOException {
        // three consecutive ports free now; another process may take one before the engine binds, so retry
        int base = 0;
        Engine e = null;
        for (int attempt = 0; e == null; attempt++) {
            base = threeFreePorts();
            try {
                e = engine(EngineConfig.defaults("fixed").withListen("127.0.0.1", base).withAgents(3));
            } catch (TransferException busy) {
                if (attempt >= 20 || !String.valueOf(busy.getMessage()).contains("cannot listen")) {
                    throw busy;
                }
            }
        }

        ConnInfo info = ConnInfo.decode(e.connInfo());
        assertThat(info.ports()).containsExactly(base, base + 1, base + 2);
        assertThat(info.portFor("x")).isEqualTo(base + ConnInfo.agentFor("x", 3));
    }

    @Test
    void everyAgentDropsItsCommsRegistrationsOfADeregisteredRegionAndTheRangeServesAgain() throws Exception {
        Engine hub = engine(EngineConfig.defaults("hub").withAgents(3));
        InMemoryNetTransportDouble hubTransport = transports.get(0);
        long hubIn = buffer(3L * SIZE);
        RegisteredMemory region = hub.register(MemoryDescriptor.dram(hubIn, 3L * SIZE));
        List<Engine> spokes = spokes(hub, region.publicMetadata());
        IntSupplier registrations = hubTransport::registrationsAlive;
        assertThat(registrations.getAsInt()).isZero();

        writeFromEverySpoke(spokes, hubIn, (byte) 1);
        int withRegion = registrations.getAsInt();
        // every spoke's connection sits on a different agent, and each registered the region on its comms
        assertThat(withRegion).isGreaterThanOrEqualTo(3);

        region.close();
        awaitAtMost(registrations, 0);

        RegisteredMemory again = hub.register(MemoryDescriptor.dram(hubIn, 3L * SIZE));
        for (Engine s : spokes) {
            s.loadRemoteMetadata("hub", again.publicMetadata());
        }
        writeFromEverySpoke(spokes, hubIn, (byte) 2);
        assertThat(registrations.getAsInt()).isEqualTo(withRegion);
    }

    @Test
    void aDialThatReachesAnAgentNotServingTheDialerIsRefusedWithTheReason() {
        Engine hub = engine(EngineConfig.defaults("hub").withAgents(3));
        ConnInfo info = ConnInfo.decode(hub.connInfo());
        List<Integer> rotated = new ArrayList<>(info.ports());
        rotated.add(rotated.remove(0));
        Engine lost = engine(EngineConfig.defaults("lost"));
        lost.loadPeer("hub", new ConnInfo("hub", info.host(), rotated, info.secret()).encode());
        long src = buffer(4096);
        lost.register(MemoryDescriptor.dram(src, 4096));
        long dst = buffer(4096);
        lost.loadRemoteMetadata("hub", hub.register(MemoryDescriptor.dram(dst, 4096)).publicMetadata());

        Transfer t = lost.session("hub").write(List.of(MemoryDescriptor.dram(src, 4096)),
                List.of(MemoryDescriptor.dram(dst, 4096)), null);

        assertThat(await(t)).isEqualTo(TransferStatus.FAILED);
        assertThat(t.error()).get().extracting(TransferException::getMessage).asString()
                .contains("lost dialed agent")
                .contains("load hub's current conn-info");
    }

    @Test
    void severalAgentsNeedAnUnpackerThatMakesAnother() {
        ScatterGather single = new OneAgentScatterGather();
        io.tcpx4j.domain.EngineConfig twoAgents = io.tcpx4j.domain.EngineConfig.from(
                EngineConfig.defaults("one").withAgents(2));
        assertThatThrownBy(() -> new Engine(twoAgents, fabric.newTransport(), new HostMemory(), single, Clock.SYSTEM))
                .isInstanceOf(TransferException.class)
                .hasMessageContaining("cannot serve more than one progress agent")
                .extracting(e -> ((TransferException) e).code()).isEqualTo(Code.NOT_SUPPORTED);
    }

    @Test
    void agentsOutOfRangeAreRefused() {
        EngineConfig c = EngineConfig.defaults("a");
        assertThatThrownBy(() -> c.withAgents(0)).hasMessageContaining("agents must be 1..64");
        assertThatThrownBy(() -> c.withAgents(65)).hasMessageContaining("agents must be 1..64");
        assertThatThrownBy(() -> c.withListen("127.0.0.1", 65535).withAgents(2))
                .hasMessageContaining("listenPort + agents - 1");
    }

    @Test
    void callerDrivenProgressRunsEveryAgent() {
        Engine a = manual("left");
        Engine b = manual("right");
        a.loadPeer("right", b.connInfo());
        b.loadPeer("left", a.connInfo());
        long src = buffer(SIZE);
        long dst = buffer(SIZE);
        fill(src, SIZE, (byte) 9);
        a.register(MemoryDescriptor.dram(src, SIZE));
        a.loadRemoteMetadata("right", b.register(MemoryDescriptor.dram(dst, SIZE)).publicMetadata());

        Transfer t = a.session("right").write(List.of(MemoryDescriptor.dram(src, SIZE)),
                List.of(MemoryDescriptor.dram(dst, SIZE)), null);
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (t.status() == TransferStatus.IN_PROGRESS && System.nanoTime() < deadline) {
            a.progress();
            b.progress();
        }

        assertThat(t.status()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(dst, SIZE)).containsOnly(9);
    }

    // ------------------------------------------------------------------ helpers

    private List<Engine> spokes(Engine hub, byte[] hubMetadata) {
        List<Engine> spokes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Engine s = engine(EngineConfig.defaults("spoke" + i));
            s.loadPeer("hub", hub.connInfo());
            s.loadRemoteMetadata("hub", hubMetadata);
            spokes.add(s);
        }
        // spoke0..2 hash to three different agents of three
        assertThat(spokes.stream().map(s -> ConnInfo.agentFor(s.name(), 3)).distinct()).hasSize(3);
        return spokes;
    }

    private void writeFromEverySpoke(List<Engine> spokes, long hubIn, byte value) throws InterruptedException {
        List<Transfer> ts = new ArrayList<>();
        for (int i = 0; i < spokes.size(); i++) {
            long src = buffer(SIZE);
            fill(src, SIZE, value);
            spokes.get(i).register(MemoryDescriptor.dram(src, SIZE));
            ts.add(spokes.get(i).session("hub").write(List.of(MemoryDescriptor.dram(src, SIZE)),
                    List.of(MemoryDescriptor.dram(hubIn + (long) i * SIZE, SIZE)), null));
        }
        for (Transfer t : ts) {
            assertThat(await(t)).as("%s", t).isEqualTo(TransferStatus.DONE);
        }
        assertThat(bytes(hubIn, 3 * SIZE)).containsOnly(value);
    }

    private static void awaitAtMost(IntSupplier count, int target) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (count.getAsInt() > target && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertThat(count.getAsInt()).isEqualTo(target);
    }

    /** A port p such that p, p + 1 and p + 2 could all be bound on 127.0.0.1 just now. */
    private static int threeFreePorts() throws IOException {
        while (true) {
            int base;
            try (ServerSocket probe = new ServerSocket(0)) {
                base = probe.getLocalPort();
            }
            if (base + 2 > 65535) {
                continue;
            }
            try (ServerSocket p0 = bind(base); ServerSocket p1 = bind(base + 1); ServerSocket p2 = bind(base + 2)) {
                return base;
            } catch (IOException taken) {
                // one of them is in use: another base
            }
        }
    }

    private static ServerSocket bind(int port) throws IOException {
        ServerSocket s = new ServerSocket();
        try {
            s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
            return s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    private static TransferStatus await(Transfer t) {
        try {
            return t.await(Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private Engine engine(EngineConfig config) {
        InMemoryNetTransportDouble t = fabric.newTransport();
        transports.add(t);
        Engine e = new Engine(io.tcpx4j.domain.EngineConfig.from(config), t, new HostMemory(), new CpuScatterGather(),
                Clock.SYSTEM);
        engines.add(e);
        e.start();
        return e;
    }

    /** An engine of two agents that the caller pumps with progress(). */
    private Engine manual(String name) {
        InMemoryNetTransportDouble t = fabric.newTransport();
        transports.add(t);
        Engine e = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults(name).withAgents(2)), t,
                new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        engines.add(e);
        e.startManual();
        return e;
    }

    private long buffer(long size) {
        long b = NativeMemory.allocate(size, 4096);
        buffers.add(b);
        return b;
    }

    private static void fill(long address, int size, byte value) {
        byte[] b = new byte[size];
        Arrays.fill(b, value);
        NativeMemory.put(address, b, 0, size);
    }

    private static byte[] bytes(long address, int size) {
        byte[] b = new byte[size];
        NativeMemory.get(address, b, 0, size);
        return b;
    }

    /** An unpacker that serves one agent only (the port's default for {@link ScatterGather#another()}). */
    private static final class OneAgentScatterGather implements ScatterGather {
        @Override
        public void add(NetRequest request, long destination, MemoryKind destinationKind) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void add(NetRequest request, long[] addresses, long[] lengths, int first, int end, MemoryKind kind) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void copy(long source, long destination, long length, MemoryKind kind) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long submit() {
            return 0;
        }

        @Override
        public boolean isDone(long ticket) {
            return true;
        }
    }
}
