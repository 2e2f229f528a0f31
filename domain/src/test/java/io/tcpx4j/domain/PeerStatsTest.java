package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.PeerListener;
import io.tcpx4j.api.PeerStats;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.protocol.RegionMetadata;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

import static io.tcpx4j.api.MemoryDescriptor.dram;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The target side's per-peer counts ({@code TransferEngine.peerStats()}): each WRITE a peer lands and each
 * READ the engine serves it counts once with its bytes, chunked or inline; refusals count by code and move no
 * count of served work; the initiator counts none of it; listeners hear each peer connect and go once, whether
 * it was loaded or admitted when it dialed in; a loaded peer that reconnects keeps its counts, and one the engine
 * only admitted leaves the list once it went, its counters keeping their counts.
 */
class PeerStatsTest {

    private static final int KIB = 1024;
    private static final int INLINE = 32 * KIB;
    private static final long CHUNKED = 100 * KIB;
    private static final long SMALL = 4 * KIB;

    private EnginePair pair;
    private NetTransport gammaTransport;
    private Engine gamma;

    @AfterEach
    void close() {
        if (gamma != null) {
            gamma.close();
            gammaTransport.close();
        }
        if (pair != null) {
            pair.close();
        }
    }

    private static PeerStats of(Engine engine, String peer) {
        return engine.peerStats().stream().filter(p -> p.peer().equals(peer)).findFirst().orElseThrow();
    }

    private void done(Transfer t) {
        assertThat(pair.pump(() -> t.status().isTerminal())).isTrue();
        assertThat(t.status()).as("%s", t.error()).isEqualTo(TransferStatus.DONE);
    }

    @Test
    void everyServedTransferCountsOnceWithItsBytesOnTheTargetAndNoneOnTheInitiator() {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(INLINE),
                EngineConfig.defaults("beta").withInlineLimit(INLINE));
        long src = pair.randomBuffer(CHUNKED);
        long dst = pair.alloc(CHUNKED);
        pair.a.register(dram(src, CHUNKED));
        pair.share(pair.b, dram(dst, CHUNKED));
        PeerStats alpha = of(pair.b, "alpha");
        assertThat(alpha.writes()).isZero();

        int chunkedWrites = 3;
        int inlineWrites = 5;
        int chunkedReads = 2;
        int inlineReads = 4;
        for (int i = 0; i < chunkedWrites; i++) {
            done(pair.a.session("beta").write(List.of(dram(src, CHUNKED)), List.of(dram(dst, CHUNKED)), null));
        }
        for (int i = 0; i < inlineWrites; i++) {
            done(pair.a.session("beta").write(List.of(dram(src, SMALL)), List.of(dram(dst + SMALL, SMALL)), null));
        }
        // a WRITE counts before its acknowledgement leaves, so by the time it is DONE
        assertThat(alpha.writes()).isEqualTo(chunkedWrites + inlineWrites);
        assertThat(alpha.bytesWritten()).isEqualTo(chunkedWrites * CHUNKED + inlineWrites * SMALL);

        for (int i = 0; i < chunkedReads; i++) {
            done(pair.a.session("beta").read(List.of(dram(src, CHUNKED)), List.of(dram(dst, CHUNKED)), null));
        }
        for (int i = 0; i < inlineReads; i++) {
            done(pair.a.session("beta").read(List.of(dram(src, SMALL)), List.of(dram(dst, SMALL)), null));
        }
        // a chunked READ counts when the target's last send tested done, which may come after the initiator's DONE
        assertThat(pair.pump(() -> alpha.reads() == chunkedReads + inlineReads)).isTrue();
        assertThat(alpha.bytesRead()).isEqualTo(chunkedReads * CHUNKED + inlineReads * SMALL);
        assertThat(alpha.writes()).isEqualTo(chunkedWrites + inlineWrites);
        for (Code c : Code.values()) {
            assertThat(alpha.refusedWrites(c) + alpha.refusedReads(c)).as("%s", c).isZero();
        }

        // alpha posted everything: beta did nothing in alpha's memory
        PeerStats beta = of(pair.a, "beta");
        assertThat(List.of(beta.writes(), beta.bytesWritten(), beta.reads(), beta.bytesRead())).containsOnly(0L);
        assertThat(pair.a.peerStats()).extracting(PeerStats::peer).containsExactly("beta");
        assertThat(pair.b.peerStats()).extracting(PeerStats::peer).containsExactly("alpha");
    }

    @Test
    void refusalsCountByCodeAndOperationAndServeNothing() {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(INLINE),
                EngineConfig.defaults("beta").withInlineLimit(INLINE));
        long size = 2 * CHUNKED;
        long src = pair.randomBuffer(size);
        long target = pair.alloc(3 * size);
        pair.a.register(dram(src, size));
        // beta registers only the middle third; alpha is told all three thirds, so its own check passes
        pair.b.register(dram(target + size, size));
        pair.a.loadRemoteMetadata("beta", new RegionMetadata("beta", dram(target, 3 * size)).encode());
        List<Transfer> refused = new ArrayList<>();
        refused.add(pair.a.session("beta").write(List.of(dram(src, size)), List.of(dram(target, size)), null));
        refused.add(pair.a.session("beta").write(List.of(dram(src, SMALL)), List.of(dram(target, SMALL)), null));
        refused.add(pair.a.session("beta").read(List.of(dram(src, size)), List.of(dram(target, size)), null));
        refused.add(pair.a.session("beta").read(List.of(dram(src, SMALL)), List.of(dram(target, SMALL)), null));
        refused.add(pair.a.session("beta").read(List.of(dram(src, SMALL)), List.of(dram(target, SMALL)), null));
        assertThat(pair.pump(() -> refused.stream().allMatch(t -> t.status().isTerminal()))).isTrue();
        assertThat(refused).allMatch(t -> t.status() == TransferStatus.FAILED);

        PeerStats alpha = of(pair.b, "alpha");
        assertThat(alpha.refusedWrites(Code.NOT_ALLOWED)).isEqualTo(2);
        assertThat(alpha.refusedReads(Code.NOT_ALLOWED)).isEqualTo(3);
        assertThat(alpha.refusedWrites(Code.NOT_SUPPORTED) + alpha.refusedReads(Code.NOT_SUPPORTED)).isZero();
        assertThat(List.of(alpha.writes(), alpha.bytesWritten(), alpha.reads(), alpha.bytesRead())).containsOnly(0L);

        // one that lands afterwards counts as served
        done(pair.a.session("beta").write(List.of(dram(src, SMALL)), List.of(dram(target + size, SMALL)), null));
        assertThat(alpha.writes()).isEqualTo(1);
        assertThat(alpha.bytesWritten()).isEqualTo(SMALL);
        assertThat(alpha.refusedWrites(Code.NOT_ALLOWED)).isEqualTo(2);
    }

    @Test
    void inlineBytesIntoDeviceMemoryAreRefusedAsNotSupported() {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(INLINE),
                EngineConfig.defaults("beta").withInlineLimit(INLINE), UnaryOperator.identity(), new HostAsVramDouble());
        long src = pair.randomBuffer(SMALL);
        long vram = pair.alloc(SMALL);
        pair.a.register(dram(src, SMALL));
        pair.b.register(new MemoryDescriptor(vram, SMALL, MemoryKind.VRAM, 0));
        // alpha is told it is host memory, so it sends the bytes inline
        pair.a.loadRemoteMetadata("beta", new RegionMetadata("beta", dram(vram, SMALL)).encode());
        Transfer w = pair.a.session("beta").write(List.of(dram(src, SMALL)), List.of(dram(vram, SMALL)), null);
        assertThat(pair.pump(() -> w.status().isTerminal())).isTrue();
        assertThat(w.error()).get().extracting(e -> e.code()).isEqualTo(Code.NOT_SUPPORTED);

        PeerStats alpha = of(pair.b, "alpha");
        assertThat(alpha.refusedWrites(Code.NOT_SUPPORTED)).isEqualTo(1);
        assertThat(alpha.refusedWrites(Code.NOT_ALLOWED)).isZero();
        assertThat(alpha.writes()).isZero();
        assertThat(PeerStats.REFUSAL_CODES).contains(Code.NOT_SUPPORTED, Code.NOT_ALLOWED);
    }

    /** A listener that notes "+name" when a peer connects and "-name" when it goes. */
    private static final class Noting implements PeerListener {
        final List<String> heard = new CopyOnWriteArrayList<>();

        @Override
        public void connected(PeerStats peer) {
            heard.add("+" + peer.peer());
        }

        @Override
        public void disconnected(PeerStats peer) {
            heard.add("-" + peer.peer());
        }
    }

    @Test
    void listenersHearEachPeerConnectAndGoOnceWhetherLoadedOrAdmittedUntilRemoved() {
        pair = new EnginePair();
        Noting listener = new Noting();
        Noting removed = new Noting();
        pair.b.addPeerListener(listener);
        pair.b.addPeerListener(removed);
        pair.b.addPeerListener(new PeerListener() {
            @Override
            public void connected(PeerStats peer) {
                throw new IllegalStateException("a listener that fails");
            }

            @Override
            public void disconnected(PeerStats peer) {
                throw new IllegalStateException("a listener that fails");
            }
        });
        // beta knows alpha (loaded) but nothing connected yet
        assertThat(listener.heard).isEmpty();

        long src = pair.randomBuffer(SMALL);
        long dst = pair.alloc(SMALL);
        pair.a.register(dram(src, SMALL));
        pair.share(pair.b, dram(dst, SMALL));
        done(pair.a.session("beta").write(List.of(dram(src, SMALL)), List.of(dram(dst, SMALL)), null));
        assertThat(listener.heard).containsExactly("+alpha");
        assertThat(removed.heard).containsExactly("+alpha");
        pair.b.removePeerListener(removed);

        // gamma is not loaded into beta: beta comes to know it when it admits gamma's connection
        gammaTransport = pair.fabric.newTransport(InMemoryNetTransportDouble.Config.defaults());
        gamma = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("gamma")), gammaTransport,
                new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        gamma.startManual();
        gamma.loadPeer("beta", pair.b.connInfo());
        long gammaSrc = pair.randomBuffer(SMALL);
        long gammaDst = pair.alloc(SMALL);
        gamma.register(dram(gammaSrc, SMALL));
        gamma.loadRemoteMetadata("beta", pair.b.register(dram(gammaDst, SMALL)).publicMetadata());
        Transfer w = gamma.session("beta").write(List.of(dram(gammaSrc, SMALL)), List.of(dram(gammaDst, SMALL)), null);
        assertThat(pair.pump(() -> {
            gamma.progress();
            return w.status().isTerminal();
        })).isTrue();
        assertThat(w.status()).isEqualTo(TransferStatus.DONE);
        assertThat(listener.heard).containsExactly("+alpha", "+gamma");
        assertThat(pair.b.peerStats()).extracting(PeerStats::peer).containsExactly("alpha", "gamma");
        PeerStats gammaCounts = of(pair.b, "gamma");

        // gamma goes: beta, which only admitted it, forgets it; its counters keep their counts, and a listener
        // added now hears only of alpha
        gamma.close();
        assertThat(pair.pump(() -> listener.heard.size() == 3
                && pair.b.peerStats().stream().noneMatch(p -> p.peer().equals("gamma")))).isTrue();
        assertThat(listener.heard).containsExactly("+alpha", "+gamma", "-gamma");
        assertThat(removed.heard).containsExactly("+alpha");
        assertThat(gammaCounts.writes()).isEqualTo(1);
        assertThat(gammaCounts.bytesWritten()).isEqualTo(SMALL);
        Noting late = new Noting();
        pair.b.addPeerListener(late);
        assertThat(late.heard).containsExactly("+alpha");

        // alpha reconnects after a disconnect: the same counters, heard as connected again
        pair.a.disconnect("beta");
        assertThat(pair.pump(() -> listener.heard.size() == 4)).isTrue();
        done(pair.a.session("beta").write(List.of(dram(src, SMALL)), List.of(dram(dst, SMALL)), null));
        assertThat(listener.heard).containsExactly("+alpha", "+gamma", "-gamma", "-alpha", "+alpha");
        assertThat(late.heard).containsExactly("+alpha", "-alpha", "+alpha");
        assertThat(of(pair.b, "alpha").writes()).isEqualTo(2);
        assertThat(pair.b.peerStats()).extracting(PeerStats::peer).containsExactly("alpha");
    }
}
