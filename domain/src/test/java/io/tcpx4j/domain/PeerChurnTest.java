package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.io.File;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An engine whose one peer comes and goes keeps no descriptor of the connections that ended: a socket
 * closed while a selector still holds its key keeps its descriptor until that selector selects again.
 */
class PeerChurnTest {

    private static final int CYCLES = 40;

    @Test
    @EnabledOnOs(OS.LINUX)
    void aPeerThatComesAndGoesLeavesNoDescriptorBehind() throws Exception {
        try (InMemoryFabric fabric = new InMemoryFabric();
             NetTransport ht = fabric.newTransport()) {
            Engine hub = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("hub")), ht,
                    new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
            long dst = NativeMemory.allocate(4096, 4096);
            try {
                hub.start();
                byte[] md = hub.register(MemoryDescriptor.dram(dst, 4096)).publicMetadata();
                cycle(fabric, hub, md, dst); // first connection: lazily started threads and buffers are the baseline
                long baseline = openDescriptors();
                for (int i = 0; i < CYCLES; i++) {
                    cycle(fabric, hub, md, dst);
                }
                // the hub notices each close within a cycle or two; give the last one a moment
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (openDescriptors() > baseline + 2 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertThat(openDescriptors()).as("descriptors after %d peers came and went", CYCLES)
                        .isLessThanOrEqualTo(baseline + 2);
            } finally {
                hub.close();
                NativeMemory.free(dst);
            }
        }
    }

    /** A new peer connects, writes 4 KiB into the hub and leaves. */
    private static void cycle(InMemoryFabric fabric, Engine hub, byte[] md, long dst) throws InterruptedException {
        try (NetTransport t = fabric.newTransport()) {
            Engine peer = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("peer")), t,
                    new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
            long src = NativeMemory.allocate(4096, 4096);
            try {
                peer.start();
                peer.loadPeer("hub", hub.connInfo());
                hub.loadPeer("peer", peer.connInfo());
                peer.register(MemoryDescriptor.dram(src, 4096));
                peer.loadRemoteMetadata("hub", md);
                Transfer w = peer.session("hub").write(List.of(MemoryDescriptor.dram(src, 4096)),
                        List.of(MemoryDescriptor.dram(dst, 4096)), null);
                assertThat(w.await(Duration.ofSeconds(20))).as("%s", w).isEqualTo(TransferStatus.DONE);
            } finally {
                peer.close();
                NativeMemory.free(src);
            }
        }
    }

    private static long openDescriptors() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? 0 : fds.length;
    }
}
