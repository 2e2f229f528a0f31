package io.tcpx4j.it.reliability;

import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A receiver that stops reading without closing anything (SIGSTOP: its sockets stay open, the kernel
 * buffers fill, no heartbeat comes back). The engine must notice by its heartbeat/peer timeout, fail
 * the transfers with REMOTE_DISCONNECT, and buffer nothing meanwhile: it sends from registered
 * memory, so posting 512 MiB to a frozen peer must not grow the heap or the native footprint.
 */
@Timeout(120)
class StalledPeerIT {

    private static final long MIB = 1 << 20;

    @Test
    void frozenReceiverIsDeclaredDeadByHeartbeatAndNothingIsBuffered() throws Exception {
        try (Node hub = new Node(Node.config("hub3"));
             PeerProcess sleeper = PeerProcess.start("sleeper", 64 * MIB, 11)) {
            RegisteredMemory src = hub.randomRegion(8 * MIB, 12);
            hub.engine.loadPeer(sleeper.name, sleeper.connInfo);
            hub.engine.loadRemoteMetadata(sleeper.name, sleeper.metadata);
            var session = hub.engine.session(sleeper.name);
            Transfer warm = session.write(List.of(Node.dram(src.descriptor().address(), 8 * MIB)),
                    List.of(Node.dram(sleeper.regionAddress, 8 * MIB)), null);
            assertThat(Node.await(warm, Duration.ofSeconds(30))).isEqualTo(TransferStatus.DONE);
            LeakCheck.Snapshot base = LeakCheck.snapshot();
            int commsBefore = hub.transport.comms();
            System.gc();
            long heapBefore = LeakCheck.heapUsed();
            long rssBefore = LeakCheck.rss();
            long directBefore = LeakCheck.directBytes();

            sleeper.freeze();
            long frozenAt = System.nanoTime();
            List<Transfer> stuck = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                long off = (i % 8) * 8 * MIB;
                stuck.add(session.write(List.of(Node.dram(src.descriptor().address(), 8 * MIB)),
                        List.of(Node.dram(sleeper.regionAddress + off, 8 * MIB)), null));
            }
            long peakRss = rssBefore;
            long peakDirect = directBefore;
            while (stuck.stream().anyMatch(t -> !t.status().isTerminal())
                    && System.nanoTime() - frozenAt < Duration.ofSeconds(15).toNanos()) {
                peakRss = Math.max(peakRss, LeakCheck.rss());
                peakDirect = Math.max(peakDirect, LeakCheck.directBytes());
                Thread.sleep(20);
            }
            long detectedMs = (System.nanoTime() - frozenAt) / 1_000_000;
            long timeoutMs = Node.config("x").peerTimeout().toMillis();
            for (Transfer t : stuck) {
                assertThat(t.status()).as("%s", t).isEqualTo(TransferStatus.FAILED);
                assertThat(t.error()).get().extracting(TransferException::code)
                        .isEqualTo(TransferException.Code.REMOTE_DISCONNECT);
            }
            assertThat(detectedMs).as("declared dead after the peer timeout, not long after")
                    .isGreaterThanOrEqualTo(timeoutMs - Node.config("x").heartbeat().toMillis() - 300).isLessThan(timeoutMs + 3000);
            System.gc();
            long heapGrowth = LeakCheck.heapUsed() - heapBefore;
            System.out.printf("[faults] SIGSTOP: 512 MiB posted to a frozen peer, failed after %d ms (peer timeout %d ms); "
                            + "RSS +%d MiB, direct +%d KiB, heap +%d KiB%n", detectedMs, timeoutMs,
                    (peakRss - rssBefore) >> 20, (peakDirect - directBefore) >> 10, heapGrowth >> 10);
            assertThat(peakRss - rssBefore).as("native footprint while frozen (512 MiB posted)").isLessThan(64 * MIB);
            assertThat(peakDirect - directBefore).as("direct buffers while frozen").isLessThan(8 * MIB);
            assertThat(heapGrowth).as("heap after the failure").isLessThan(32 * MIB);
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> hub.stats().connections() == 0
                    && hub.stats().liveOperations() == 0 && hub.stats().outstandingRequests() == 0
                    && hub.transport.comms() == 0 && hub.transport.registrations() == 0))
                    .as("connection state released: %s (comms before %d)", hub, commsBefore).isTrue();
            LeakCheck.assertBackTo(base, 0);

            // thawed, the same process is a peer again: the hub reconnects on demand
            sleeper.thaw();
            Transfer again = session.write(List.of(Node.dram(src.descriptor().address(), 8 * MIB)),
                    List.of(Node.dram(sleeper.regionAddress, 8 * MIB)), null);
            assertThat(Node.await(again, Duration.ofSeconds(30))).as("%s %s", again, again.error()).isEqualTo(TransferStatus.DONE);
            assertThat(sleeper.crc(sleeper.regionAddress, 8 * MIB)).isEqualTo(Buffers.crc(src.descriptor().address(), 8 * MIB));
        }
    }
}
