package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One engine serving several peers at once, each with its own progress thread: the hub reads its
 * control sockets through a poll of its readiness ({@link io.tcpx4j.domain.idle.IdleSelector#poll()}; more than one connection), the spokes read theirs
 * directly. Every spoke WRITEs and READs inline-sized and chunked blocks with notifications while the
 * hub WRITEs into every spoke; every byte and every notification is checked. With one hub agent, and
 * with three (each serving one spoke; the spokes have two agents each, so the hub's dials meet the
 * spokes' agents that dial it, and crossing dials are settled per agent).
 */
class HubTest {

    private static final int SPOKES = 3;
    private static final int ROUNDS = 12;
    /** Inline-sized, then chunked over several chunks with a ragged tail. */
    private static final int[] SIZES = {4096, 3 * EngineConfig.DEFAULT_CHUNK + 123};
    private static final int SLOT = SIZES[1];

    private final InMemoryFabric fabric = new InMemoryFabric();
    private final List<NetTransport> transports = new ArrayList<>();
    private final List<Engine> engines = new ArrayList<>();
    private final List<Long> buffers = new ArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(SPOKES + 1);

    @AfterEach
    void close() {
        pool.shutdownNow();
        engines.forEach(Engine::close);
        transports.forEach(NetTransport::close);
        fabric.close();
        buffers.forEach(NativeMemory::free);
    }

    @ParameterizedTest(name = "hub agents {0}")
    @ValueSource(ints = {1, 3})
    void servesEveryPeerAtOnceWithEveryByteAndNotificationInPlace(int hubAgents) throws Exception {
        Engine hub = engine("hub", hubAgents);
        assertThat(ConnInfo.decode(hub.connInfo()).ports()).hasSize(hubAgents).doesNotHaveDuplicates();
        // hub memory: per spoke, a slot the spoke writes into and a slot it reads from
        long hubIn = buffer(SPOKES * (long) SLOT);
        long hubOut = buffer(SPOKES * (long) SLOT);
        byte[] hubOutBytes = random(SPOKES * SLOT, 1);
        NativeMemory.put(hubOut, hubOutBytes, 0, hubOutBytes.length);
        byte[] hubInMd = hub.register(MemoryDescriptor.dram(hubIn, SPOKES * (long) SLOT)).publicMetadata();
        byte[] hubOutMd = hub.register(MemoryDescriptor.dram(hubOut, SPOKES * (long) SLOT)).publicMetadata();
        List<Engine> spokes = new ArrayList<>();
        long[] spokeSrc = new long[SPOKES];
        long[] spokeDst = new long[SPOKES];
        long[] spokeIn = new long[SPOKES];
        byte[][] spokeSrcBytes = new byte[SPOKES][];
        for (int i = 0; i < SPOKES; i++) {
            Engine s = engine("spoke" + i, 2);
            spokes.add(s);
            s.loadPeer("hub", hub.connInfo());
            hub.loadPeer(s.name(), s.connInfo());
            spokeSrc[i] = buffer(SLOT);
            spokeDst[i] = buffer(SLOT);
            spokeIn[i] = buffer(SLOT);
            spokeSrcBytes[i] = random(SLOT, 100 + i);
            NativeMemory.put(spokeSrc[i], spokeSrcBytes[i], 0, SLOT);
            s.register(MemoryDescriptor.dram(spokeSrc[i], SLOT));
            s.register(MemoryDescriptor.dram(spokeDst[i], SLOT));
            hub.loadRemoteMetadata(s.name(), s.register(MemoryDescriptor.dram(spokeIn[i], SLOT)).publicMetadata());
            s.loadRemoteMetadata("hub", hubInMd);
            s.loadRemoteMetadata("hub", hubOutMd);
        }

        List<Future<?>> work = new ArrayList<>();
        for (int i = 0; i < SPOKES; i++) {
            int me = i;
            Engine s = spokes.get(i);
            work.add(pool.submit(() -> {
                for (int r = 0; r < ROUNDS; r++) {
                    int size = SIZES[r % SIZES.length];
                    long inSlot = hubIn + (long) me * SLOT;
                    long outSlot = hubOut + (long) me * SLOT;
                    done(s.session("hub").write(List.of(MemoryDescriptor.dram(spokeSrc[me], size)),
                            List.of(MemoryDescriptor.dram(inSlot, size)), note("w", me, r)));
                    done(s.session("hub").read(List.of(MemoryDescriptor.dram(spokeDst[me], size)),
                            List.of(MemoryDescriptor.dram(outSlot, size)), note("r", me, r)));
                    assertThat(bytes(spokeDst[me], size)).as("spoke %d read round %d", me, r)
                            .isEqualTo(java.util.Arrays.copyOfRange(hubOutBytes, me * SLOT, me * SLOT + size));
                }
                return null;
            }));
        }
        byte[] hubToSpoke = random(SLOT, 7);
        long hubSrc = buffer(SLOT);
        NativeMemory.put(hubSrc, hubToSpoke, 0, SLOT);
        hub.register(MemoryDescriptor.dram(hubSrc, SLOT));
        work.add(pool.submit(() -> {
            for (int r = 0; r < ROUNDS; r++) {
                for (int i = 0; i < SPOKES; i++) {
                    done(hub.session("spoke" + i).write(List.of(MemoryDescriptor.dram(hubSrc, SLOT)),
                            List.of(MemoryDescriptor.dram(spokeIn[i], SLOT)), note("h", i, r)));
                }
            }
            return null;
        }));
        for (Future<?> f : work) {
            f.get();
        }

        for (int i = 0; i < SPOKES; i++) {
            assertThat(bytes(hubIn + (long) i * SLOT, SIZES[(ROUNDS - 1) % SIZES.length]))
                    .as("spoke %d's last WRITE in the hub", i)
                    .isEqualTo(java.util.Arrays.copyOf(spokeSrcBytes[i], SIZES[(ROUNDS - 1) % SIZES.length]));
            assertThat(bytes(spokeIn[i], SLOT)).as("the hub's WRITE in spoke %d", i).isEqualTo(hubToSpoke);
        }
        Set<String> atHub = notifications(hub, 2 * SPOKES * ROUNDS);
        for (int i = 0; i < SPOKES; i++) {
            for (int r = 0; r < ROUNDS; r++) {
                assertThat(atHub).contains("spoke" + i + "/w-" + i + "-" + r, "spoke" + i + "/r-" + i + "-" + r);
            }
            Set<String> atSpoke = notifications(spokes.get(i), ROUNDS);
            for (int r = 0; r < ROUNDS; r++) {
                assertThat(atSpoke).contains("hub/h-" + i + "-" + r);
            }
        }
    }

    private Engine engine(String name, int agents) {
        NetTransport t = fabric.newTransport();
        transports.add(t);
        Engine e = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults(name).withAgents(agents)), t,
                new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        engines.add(e);
        e.start();
        return e;
    }

    private long buffer(long size) {
        long b = NativeMemory.allocate(size, 4096);
        buffers.add(b);
        return b;
    }

    private static byte[] random(int size, int seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] bytes(long address, int size) {
        byte[] b = new byte[size];
        NativeMemory.get(address, b, 0, size);
        return b;
    }

    private static byte[] note(String kind, int who, int round) {
        return (kind + "-" + who + "-" + round).getBytes(StandardCharsets.UTF_8);
    }

    private static void done(Transfer t) throws InterruptedException {
        assertThat(t.await(Duration.ofSeconds(30))).as("%s", t).isEqualTo(TransferStatus.DONE);
    }

    /** Exactly {@code count} notifications, as "sender/message", each once; waits up to 30 s for them. */
    private static Set<String> notifications(Engine e, int count) throws InterruptedException {
        Set<String> seen = new HashSet<>();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (seen.size() < count && System.nanoTime() < deadline) {
            for (Notification n : e.drainNotifications()) {
                assertThat(seen.add(n.agent() + "/" + new String(n.message(), StandardCharsets.UTF_8)))
                        .as("notification %s delivered once", n).isTrue();
            }
            Thread.sleep(1);
        }
        assertThat(seen).hasSize(count);
        return seen;
    }
}
