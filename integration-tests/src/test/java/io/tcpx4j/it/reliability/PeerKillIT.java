package io.tcpx4j.it.reliability;

import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kill -9 of a peer process in the middle of transfers: with it, and with a bystander that must not
 * notice. Three JVMs (this one hosts the "hub" engine; "victim" and "bystander" are {@link PeerMain}
 * children), then a fourth: the victim restarted under the same name.
 */
@Timeout(180)
class PeerKillIT {

    private static final long MIB = 1 << 20;
    /** The guarantee under test: in-flight transfers with a dead peer end within this. */
    private static final Duration FAIL_WITHIN = Duration.ofSeconds(5);

    @Test
    void killedPeerFailsItsTransfersFreesEverythingAndMayComeBackWhileOthersAreServed() throws Exception {
        List<AutoCloseable> open = new ArrayList<>();
        Bystander traffic = null;
        try {
            Node hub = new Node(Node.config("hub"));
            open.add(hub);
            PeerProcess victim = PeerProcess.start("victim", 64 * MIB, 1);
            open.add(victim);
            PeerProcess bystander = PeerProcess.start("bystander", 4 * MIB, 2);
            open.add(bystander);
            RegisteredMemory src = hub.randomRegion(64 * MIB, 3);
            long dst = hub.alloc(64 * MIB);
            hub.register(dst, 64 * MIB);
            for (PeerProcess p : List.of(victim, bystander)) {
                hub.engine.loadPeer(p.name, p.connInfo);
                hub.engine.loadRemoteMetadata(p.name, p.metadata);
            }

            traffic = new Bystander(hub, bystander);
            traffic.start();
            assertThat(traffic.awaitRounds(5, Duration.ofSeconds(30))).as("bystander traffic starts: %s", traffic.errors).isTrue();
            traffic.pause();
            LeakCheck.Snapshot base = LeakCheck.snapshot();
            int commsBefore = hub.transport.comms();
            int registrationsBefore = hub.transport.registrations();
            assertThat(hub.stats().connections()).isEqualTo(1);
            traffic.resume();

            // 512 MiB with the victim, both directions, so that most of it is in flight at the kill
            List<Transfer> doomed = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                long off = (i % 8) * 8 * MIB;
                doomed.add(hub.engine.session("victim").write(List.of(Node.dram(src.descriptor().address() + off, 8 * MIB)),
                        List.of(Node.dram(victim.regionAddress + off, 8 * MIB)), "w".getBytes()));
                doomed.add(hub.engine.session("victim").read(List.of(Node.dram(dst + off, 8 * MIB)),
                        List.of(Node.dram(victim.regionAddress + off, 8 * MIB)), "r".getBytes()));
            }
            assertThat(Node.eventually(Duration.ofSeconds(30), () -> doomed.stream().anyMatch(t -> t.status().isTerminal())))
                    .as("data moves before the kill").isTrue();
            long roundsBeforeKill = traffic.rounds();
            // in flight as of just before the kill (the hub may notice the death while kill9() reaps it)
            List<Transfer> inFlight = doomed.stream().filter(t -> !t.status().isTerminal()).toList();
            long killedAt = System.nanoTime();
            victim.kill9();
            assertThat(inFlight).as("transfers in flight at the kill").isNotEmpty();

            long lastEnd = 0;
            int failed = 0;
            for (Transfer t : inFlight) {
                Duration left = FAIL_WITHIN.minusNanos(System.nanoTime() - killedAt);
                TransferStatus s = Node.await(t, left.isNegative() ? Duration.ZERO : left);
                // one whose last ack was already on its way may still end DONE; nothing else may happen
                assertThat(s).as("%s within %s of the kill", t, FAIL_WITHIN).isIn(TransferStatus.FAILED, TransferStatus.DONE);
                if (s == TransferStatus.FAILED) {
                    assertThat(t.error()).get().extracting(TransferException::code)
                            .isEqualTo(TransferException.Code.REMOTE_DISCONNECT);
                    failed++;
                }
                lastEnd = System.nanoTime();
            }
            assertThat(failed).as("transfers the kill really cut off").isPositive();
            for (Transfer t : doomed) {
                assertThat(t.status()).isIn(TransferStatus.DONE, TransferStatus.FAILED);
            }
            System.out.printf("[faults] kill -9: %d of %d transfers in flight, %d failed REMOTE_DISCONNECT, the last %d ms after the kill%n",
                    inFlight.size(), doomed.size(), failed, (lastEnd - killedAt) / 1_000_000);

            // everything the victim held is released; the bystander's connection is untouched
            traffic.pause();
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> hub.stats().connections() == 1
                    && hub.stats().outstandingRequests() == 0 && hub.stats().liveOperations() == 0
                    && hub.transport.comms() == commsBefore && hub.transport.registrations() == registrationsBefore
                    && hub.transport.listeners() == 0))
                    .as("hub back to the bystander alone: %s", hub).isTrue();
            LeakCheck.assertBackTo(base, 0);
            long roundsAfterKill = traffic.rounds();
            assertThat(roundsAfterKill).as("bystander served while the victim died").isGreaterThan(roundsBeforeKill);
            traffic.resume();

            // the victim restarts (new process, new secret and port, new memory) under the same name
            PeerProcess reborn = PeerProcess.start("victim", 64 * MIB, 4);
            open.add(reborn);
            hub.engine.unloadRemoteMetadata("victim", victim.metadata);
            hub.engine.loadPeer("victim", reborn.connInfo);
            hub.engine.loadRemoteMetadata("victim", reborn.metadata);
            Transfer w = hub.engine.session("victim").write(List.of(Node.dram(src.descriptor().address(), 8 * MIB)),
                    List.of(Node.dram(reborn.regionAddress, 8 * MIB)), null);
            Transfer r = hub.engine.session("victim").read(List.of(Node.dram(dst, 8 * MIB)),
                    List.of(Node.dram(reborn.regionAddress + 8 * MIB, 8 * MIB)), null);
            assertThat(Node.await(w, Duration.ofSeconds(30))).isEqualTo(TransferStatus.DONE);
            assertThat(Node.await(r, Duration.ofSeconds(30))).isEqualTo(TransferStatus.DONE);
            assertThat(reborn.crc(reborn.regionAddress, 8 * MIB)).as("WRITE landed in the new process")
                    .isEqualTo(Buffers.crc(src.descriptor().address(), 8 * MIB));
            assertThat(Buffers.crc(dst, 8 * MIB)).as("READ from the new process")
                    .isEqualTo(reborn.crc(reborn.regionAddress + 8 * MIB, 8 * MIB));

            assertThat(traffic.awaitRounds(roundsAfterKill + 5, Duration.ofSeconds(30))).as("bystander served after: %s", traffic.errors).isTrue();
            traffic.stop();
            assertThat(traffic.errors).as("bystander errors").isEmpty();
            // the hub's last READ completes when its bytes arrived, a moment before the bystander's agent
            // sees its sends test done: its last operation may still be live for that moment
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> bystander.stats()[2] == 0))
                    .as("bystander live operations drain to 0: %s", java.util.Arrays.toString(bystander.stats())).isTrue();
            assertThat(bystander.stats()[0]).as("bystander connections").isEqualTo(1);
            System.out.printf("[faults] bystander: %d verified round trips, 0 errors%n", traffic.rounds());
        } finally {
            if (traffic != null) {
                traffic.stop();
            }
            for (int i = open.size() - 1; i >= 0; i--) {
                open.get(i).close();
            }
        }
    }

    @Test
    void killedInitiatorLeavesNothingPinnedOrRegisteredOnItsTarget() throws Exception {
        try (Node hub = new Node(Node.config("hub2"));
             PeerProcess writer = PeerProcess.start("writer", 64 * MIB, 5)) {
            long target = hub.alloc(64 * MIB);
            RegisteredMemory region = hub.register(target, 64 * MIB);
            assertThat(writer.ask("PEER hub2 " + Base64.getEncoder().encodeToString(hub.engine.connInfo()))).isEqualTo("OK");
            assertThat(writer.ask("META hub2 " + Base64.getEncoder().encodeToString(region.publicMetadata()))).isEqualTo("OK");
            assertThat(writer.ask("WRITE hub2 " + writer.regionAddress + " " + target + " 4096")).isEqualTo("XFER DONE -");
            // baseline with the transport's I/O threads up (they live as long as the transport)
            LeakCheck.Snapshot base = LeakCheck.snapshot();
            // the child WRITEs and READs 64 MiB, twice each, one after the other; it dies mid-way
            for (int i = 0; i < 2; i++) {
                writer.send("WRITE hub2 " + writer.regionAddress + " " + target + " " + 64 * MIB);
                writer.send("READ hub2 " + writer.regionAddress + " " + target + " " + 64 * MIB);
            }
            assertThat(Node.eventually(Duration.ofSeconds(20), () -> hub.stats().liveOperations() > 0))
                    .as("the target is busy with the writer's transfers").isTrue();
            writer.kill9();
            assertThat(Node.eventually(FAIL_WITHIN, () -> hub.stats().connections() == 0
                    && hub.stats().liveOperations() == 0 && hub.stats().outstandingRequests() == 0
                    && hub.transport.comms() == 0 && hub.transport.registrations() == 0))
                    .as("target released everything of the dead initiator: %s", hub).isTrue();
            region.close();
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> hub.stats().registeredRegions() == 0))
                    .as("the region deregisters: no transfer of the dead peer still pins it").isTrue();
            LeakCheck.assertBackTo(base, 0);
        }
    }

    /** Verified round trips with the bystander on a thread of its own: WRITE a range, READ it back, compare. */
    private static final class Bystander {
        private final Node hub;
        private final PeerProcess peer;
        private final AtomicLong rounds = new AtomicLong();
        private final AtomicBoolean paused = new AtomicBoolean();
        private final AtomicBoolean idle = new AtomicBoolean();
        private final AtomicBoolean stop = new AtomicBoolean();
        final List<String> errors = new CopyOnWriteArrayList<>();
        private Thread thread;

        Bystander(Node hub, PeerProcess peer) {
            this.hub = hub;
            this.peer = peer;
        }

        void start() {
            long size = peer.regionSize;
            long out = hub.alloc(size);
            long back = hub.alloc(size);
            Buffers.fillRandom(out, size, 99);
            hub.register(out, size);
            hub.register(back, size);
            thread = new Thread(() -> {
                java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
                var session = hub.engine.session(peer.name);
                while (!stop.get()) {
                    try {
                        round(session, rnd, size, out, back);
                    } catch (RuntimeException e) {
                        errors.add("round " + rounds.get() + ": " + e);
                        return;
                    }
                }
            }, "bystander-traffic");
            thread.setDaemon(true);
            thread.start();
        }

        private void round(io.tcpx4j.api.Session session, java.util.SplittableRandom rnd, long size, long out, long back) {
            if (paused.get()) {
                idle.set(true);
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            idle.set(false);
            int len = 1 + rnd.nextInt(256 * 1024);
            long off = rnd.nextLong(size - len);
            Transfer w = session.write(List.of(Node.dram(out + off, len)), List.of(Node.dram(peer.regionAddress + off, len)), null);
            // a WRITE and a READ in flight together are not ordered: read back only once it landed
            TransferStatus ws = Node.await(w, Duration.ofSeconds(20));
            Transfer r = session.read(List.of(Node.dram(back + off, len)), List.of(Node.dram(peer.regionAddress + off, len)), null);
            TransferStatus rs = Node.await(r, Duration.ofSeconds(20));
            if (ws != TransferStatus.DONE || rs != TransferStatus.DONE) {
                errors.add("round " + rounds.get() + ": " + w + " " + w.error() + ", " + r + " " + r.error());
            } else if (Buffers.firstDifference(out + off, back + off, len) >= 0) {
                errors.add("round " + rounds.get() + ": data differs");
            }
            rounds.incrementAndGet();
        }

        long rounds() {
            return rounds.get();
        }

        boolean awaitRounds(long n, Duration timeout) {
            return Node.eventually(timeout, () -> rounds.get() >= n || !errors.isEmpty()) && errors.isEmpty();
        }

        void pause() {
            idle.set(false);
            paused.set(true);
            Node.eventually(Duration.ofSeconds(30), idle::get);
        }

        void resume() {
            paused.set(false);
        }

        void stop() throws InterruptedException {
            stop.set(true);
            if (thread != null) {
                thread.join(30_000);
            }
        }
    }
}
