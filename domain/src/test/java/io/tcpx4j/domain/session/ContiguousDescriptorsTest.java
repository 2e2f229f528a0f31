package io.tcpx4j.domain.session;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.CountingTransportDouble;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.EnginePair;
import io.tcpx4j.domain.protocol.RegionMetadata;
import io.tcpx4j.domain.registration.LocalRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Descriptors that continue each other on both sides travel as one: consecutive KV blocks become a few
 * large chunks, never across a registration or a published region, every pin released.
 */
class ContiguousDescriptorsTest {

    private static final int KIB = 1024;
    private static final int CHUNK = 512 * KIB;

    private EnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private void pair(int coalesceLimit) {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(0).withCoalesceLimit(coalesceLimit),
                EngineConfig.defaults("beta").withInlineLimit(0).withCoalesceLimit(coalesceLimit),
                CountingTransportDouble::new);
    }

    @Test
    void consecutiveBlocksOnBothSidesTravelAsOneDescriptorInFullChunks() {
        pair(0);
        long[] sizes = repeat(64 * KIB, 64);
        pair.transferAndCheck(true, sizes, false, false);
        // 4 MiB back to back on both sides: 8 chunks of 512 KiB, sent and received, not 64
        assertThat(CountingTransportDouble.total(pair)).as("requests of the WRITE").isEqualTo(2 * 8);
        pair.transferAndCheck(false, sizes, false, false);
        assertThat(CountingTransportDouble.total(pair)).as("requests of the WRITE and the READ").isEqualTo(4 * 8);
    }

    @Test
    void blocksThatFollowEachOtherOnOneSideOnlyStayApart() {
        pair(0);
        long[] sizes = repeat(64 * KIB, 16);
        pair.transferAndCheck(true, sizes, false, true);
        pair.transferAndCheck(false, sizes, true, false);
        assertThat(CountingTransportDouble.total(pair)).isEqualTo(4 * 16);
    }

    @Test
    void mergedRunsKeepTheRestOfThePostInOrder() {
        pair(0);
        // zero-length and odd-sized descriptors between full ones, all back to back
        long[] sizes = {3, 0, 64 * KIB, 5000, 0, 700 * KIB, 1};
        long total = Arrays.stream(sizes).sum();
        pair.transferAndCheck(true, sizes, false, false);
        pair.transferAndCheck(false, sizes, false, false);
        assertThat(CountingTransportDouble.total(pair)).isEqualTo(4 * ((total + CHUNK - 1) / CHUNK));
    }

    @Test
    void neighbouringRegistrationsAreNotMergedAcrossAndEveryPinIsReleased() {
        pair(0);
        Engine a = pair.a;
        Engine b = pair.b;
        long half = 256 * KIB;
        long src = pair.randomBuffer(2 * half);
        long dst = pair.poisoned(2 * half, (byte) 0x5A);
        // two registrations on each side that touch in memory, both published
        MemoryDescriptor s0 = MemoryDescriptor.dram(src, half);
        MemoryDescriptor s1 = MemoryDescriptor.dram(src + half, half);
        MemoryDescriptor d0 = MemoryDescriptor.dram(dst, half);
        MemoryDescriptor d1 = MemoryDescriptor.dram(dst + half, half);
        LocalRegion r0 = (LocalRegion) a.register(s0);
        LocalRegion r1 = (LocalRegion) a.register(s1);
        b.register(d0);
        b.register(d1);
        a.loadRemoteMetadata("beta", new RegionMetadata("beta", d0).encode());
        a.loadRemoteMetadata("beta", new RegionMetadata("beta", d1).encode());
        // eight 64 KiB blocks back to back on both sides; blocks 3 and 4 meet where the registrations meet
        List<MemoryDescriptor> local = new ArrayList<>();
        List<MemoryDescriptor> remote = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            local.add(MemoryDescriptor.dram(src + i * 64L * KIB, 64 * KIB));
            remote.add(MemoryDescriptor.dram(dst + i * 64L * KIB, 64 * KIB));
        }
        Transfer t = a.session("beta").write(local, remote, "two".getBytes(StandardCharsets.UTF_8));
        List<Notification> notes = new ArrayList<>();
        assertThat(pair.pump(() -> {
            notes.addAll(b.drainNotifications());
            return t.status().isTerminal() && (!notes.isEmpty() || t.status() != TransferStatus.DONE);
        })).isTrue();
        assertThat(t.status()).isEqualTo(TransferStatus.DONE);
        assertThat(EnginePair.read(dst, 2 * half)).isEqualTo(EnginePair.read(src, 2 * half));
        // one 256 KiB descriptor per registration: one chunk each, sent and received
        assertThat(CountingTransportDouble.total(pair)).isEqualTo(2 * 2);
        assertThat(pair.pump(() -> r0.inflight() == 0 && r1.inflight() == 0)).as("pins released").isTrue();
    }

    @Test
    void mergingCompactsTheArraysAndUnpinsWhatItMergedAway() {
        LocalRegion r = new LocalRegion(null, MemoryDescriptor.dram(0x10000, 0x10000), null, new byte[0]);
        LocalRegion other = new LocalRegion(null, MemoryDescriptor.dram(0x20000, 0x10000), null, new byte[0]);
        Object remoteRegion = new Object();
        long[] local = {0x10000, 0x10100, 0x10300, 0x20000, 0x10000, 0x10010};
        long[] remote = {0x50000, 0x50100, 0x50300, 0x50400, 0x60000, 0x60010};
        long[] lengths = {0x100, 0x200, 0x100, 0x100, 0x10, 0x10};
        LocalRegion[] regions = {r, r, r, other, r, r};
        for (LocalRegion x : regions) {
            assertThat(x.acquire()).isTrue();
        }
        Object[] remoteRegions = {remoteRegion, remoteRegion, remoteRegion, remoteRegion, remoteRegion, remoteRegion};

        int n = Descriptors.mergeContiguous(local, remote, lengths, regions, remoteRegions);

        // [0,1,2] continue each other on both sides; 3 is another registration; 4 starts over; 5 follows 4
        assertThat(n).isEqualTo(3);
        assertThat(Arrays.copyOf(local, n)).containsExactly(0x10000, 0x20000, 0x10000);
        assertThat(Arrays.copyOf(remote, n)).containsExactly(0x50000, 0x50400, 0x60000);
        assertThat(Arrays.copyOf(lengths, n)).containsExactly(0x400, 0x100, 0x20);
        assertThat(Arrays.copyOf(regions, n)).containsExactly(r, other, r);
        assertThat(r.inflight()).as("one pin per remaining descriptor").isEqualTo(2);
        assertThat(other.inflight()).isEqualTo(1);
    }

    @Test
    void rangesInDifferentPublishedRegionsStayApart() {
        LocalRegion r = new LocalRegion(null, MemoryDescriptor.dram(0x10000, 0x10000), null, new byte[0]);
        long[] local = {0x10000, 0x10100};
        long[] remote = {0x50000, 0x50100};
        long[] lengths = {0x100, 0x100};
        LocalRegion[] regions = {r, r};
        Object[] remoteRegions = {new Object(), new Object()};
        assertThat(Descriptors.mergeContiguous(local, remote, lengths, regions, remoteRegions)).isEqualTo(2);
        assertThat(lengths).containsExactly(0x100, 0x100);
    }

    private static long[] repeat(long size, int n) {
        long[] sizes = new long[n];
        Arrays.fill(sizes, size);
        return sizes;
    }
}
