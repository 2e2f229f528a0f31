package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.PeerListener;
import io.tcpx4j.api.PeerStats;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.tcpx4j.api.MemoryDescriptor.dram;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A long-running engine (the hub) that peers with ever new names dial: each peer it knows only because the peer
 * dialed in is forgotten at the hub's first housekeeping after its last connection closed (its name leaves
 * {@code peerStats()}, its counters keep their counts), while peers whose conn-info or regions the hub loaded
 * stay. The hub's clock moves only when the test moves it, so its housekeeping runs in exactly the rounds the
 * test says; everything is pumped by hand.
 */
class PeerForgettingTest {

    private static final long SMALL = 4096;
    private static final long HOUSEKEEPING_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** The hub's clock, in nanoseconds; only the test moves it. */
    private long now = 1_000_000_000L;
    private final InMemoryFabric fabric = new InMemoryFabric();
    private final NetTransport hubTransport = fabric.newTransport();
    private final Clock hubClock = () -> now;
    private final Engine hub = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("hub")),
            hubTransport, new HostMemory(), new CpuScatterGather(), hubClock);
    private final List<Initiator> initiators = new ArrayList<>();
    private final List<Long> buffers = new ArrayList<>();
    private final List<PeerStats> connected = new ArrayList<>();
    private final List<String> gone = new ArrayList<>();
    private long hubIn;
    private byte[] hubMetadata;

    @BeforeEach
    void startHub() {
        hub.startManual();
        hubIn = alloc();
        hubMetadata = hub.register(dram(hubIn, SMALL)).publicMetadata();
        hub.addPeerListener(new PeerListener() {
            @Override
            public void connected(PeerStats peer) {
                connected.add(peer);
            }

            @Override
            public void disconnected(PeerStats peer) {
                gone.add(peer.peer());
            }
        });
    }

    @AfterEach
    void close() {
        for (Initiator i : new ArrayList<>(initiators)) {
            i.close();
        }
        hub.close();
        hubTransport.close();
        fabric.close();
        buffers.forEach(NativeMemory::free);
    }

    @Test
    void peersThatDialedInAreForgottenAtTheHousekeepingAfterTheyWentAndTheirCountersKeepTheirCounts() {
        int peers = 20;
        for (int i = 0; i < peers; i++) {
            String name = "initiator-" + i;
            Initiator in = new Initiator(name);
            in.write();
            assertThat(known()).as("a peer with a connection up, through housekeeping after housekeeping")
                    .contains(name);
            leave(in);
            assertThat(known()).as("gone, no housekeeping since").contains(name);
            housekeeping();
            assertThat(known()).as("gone, one housekeeping since").doesNotContain(name);
        }
        assertThat(hub.peerStats()).isEmpty();
        assertThat(connected).extracting(PeerStats::peer).hasSize(peers).doesNotHaveDuplicates();
        assertThat(connected).allSatisfy(p -> {
            assertThat(p.writes()).as("%s's WRITEs", p.peer()).isEqualTo(1);
            assertThat(p.bytesWritten()).isEqualTo(SMALL);
        });
        assertThat(hub.stats().connections()).isZero();
    }

    @Test
    void peersWhoseConnInfoOrRegionsWereLoadedStay() {
        Initiator loaded = new Initiator("loaded");
        hub.loadPeer("loaded", loaded.engine.connInfo());
        Initiator published = new Initiator("published");
        long publishedDst = alloc();
        hub.loadRemoteMetadata("published",
                published.engine.register(dram(publishedDst, SMALL)).publicMetadata());
        Initiator admitted = new Initiator("admitted");
        for (Initiator in : List.of(loaded, published, admitted)) {
            in.write();
            leave(in);
        }
        housekeeping();
        housekeeping();
        assertThat(known()).containsExactly("loaded", "published");
    }

    @Test
    void aPeerThatComesBackAfterItWasForgottenStartsFromZero() {
        Initiator first = new Initiator("again");
        first.write();
        leave(first);
        housekeeping();
        assertThat(known()).doesNotContain("again");

        Initiator second = new Initiator("again");
        second.write();
        second.write();
        assertThat(connected).hasSize(2);
        assertThat(connected.get(0).writes()).as("the first visit's counts").isEqualTo(1);
        assertThat(connected.get(1)).as("new counters").isNotSameAs(connected.get(0));
        assertThat(connected.get(1).writes()).as("the second visit's counts").isEqualTo(2);
        assertThat(hub.peerStats()).containsExactly(connected.get(1));
    }

    @Test
    void aSessionTakenBeforeThePeerWasForgottenReachesThePeerOfItsNameNow() {
        Initiator first = new Initiator("back");
        first.write();
        Session toBack = hub.session("back");
        leave(first);
        housekeeping();
        assertThat(known()).doesNotContain("back");

        Initiator second = new Initiator("back");
        second.write();
        toBack.notify("hello".getBytes(StandardCharsets.UTF_8));
        List<Notification> heard = new ArrayList<>();
        pump(() -> heard.addAll(second.engine.drainNotifications()) && !heard.isEmpty(), false);
        assertThat(heard).containsExactly(new Notification("hub", "hello".getBytes(StandardCharsets.UTF_8)));
    }

    // ------------------------------------------------------------------ helpers

    private List<String> known() {
        return hub.peerStats().stream().map(PeerStats::peer).toList();
    }

    /** Closes {@code in} and pumps until the hub heard its last connection close, without housekeeping. */
    private void leave(Initiator in) {
        String name = in.engine.name();
        long before = gone.stream().filter(name::equals).count();
        in.close();
        pump(() -> gone.stream().filter(name::equals).count() > before, false);
    }

    /** Moves the hub's clock to its next housekeeping and runs one round. */
    private void housekeeping() {
        now += HOUSEKEEPING_NANOS;
        hub.progress();
    }

    /**
     * Pumps the hub and every initiator until {@code done}; {@code housekeeping}: every round moves the hub's
     * clock to its next housekeeping (which also polls its listener for connections to accept). The 20 s turn a
     * pump that never gets done into a failure.
     */
    private void pump(BooleanSupplier done, boolean housekeeping) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("pumped for 20 s").isNegative();
            if (housekeeping) {
                now += HOUSEKEEPING_NANOS;
            }
            hub.progress();
            for (Initiator i : initiators) {
                i.engine.progress();
            }
        }
    }

    private long alloc() {
        long a = NativeMemory.allocate(SMALL, 4096);
        buffers.add(a);
        return a;
    }

    /** An engine that loaded the hub's conn-info and region and writes into it; the hub loaded nothing of it. */
    private final class Initiator implements AutoCloseable {
        final NetTransport transport = fabric.newTransport();
        final Engine engine;
        final MemoryDescriptor source;

        Initiator(String name) {
            engine = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults(name)), transport,
                    new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
            engine.startManual();
            engine.loadPeer("hub", hub.connInfo());
            engine.loadRemoteMetadata("hub", hubMetadata);
            source = dram(alloc(), SMALL);
            engine.register(source);
            initiators.add(this);
        }

        void write() {
            Transfer w = engine.session("hub").write(List.of(source), List.of(dram(hubIn, SMALL)), null);
            pump(() -> w.status().isTerminal(), true);
            assertThat(w.status()).isEqualTo(TransferStatus.DONE);
        }

        @Override
        public void close() {
            if (initiators.remove(this)) {
                engine.close();
                transport.close();
            }
        }
    }
}
