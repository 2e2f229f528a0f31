package io.tcpx4j.it.reliability;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Soak: 20,000 random transfers among 3 engines (each with its own progress thread and loopback
 * transport), READ and WRITE in every direction, 1 B .. 8 MiB (most small, a few large), a fifth
 * of them with a notification, 6 application threads posting at once. Every transfer's bytes are
 * compared with their source; every notification must arrive exactly once. Then every counter must
 * be back to zero and threads, descriptors and native memory back to where they were.
 */
@Timeout(300)
class SoakIT {

    private static final int TRANSFERS = Integer.getInteger("tcpx4j.soak.transfers", 20_000);
    private static final int ENGINES = 3;
    private static final int THREADS = 6;
    private static final long MIB = 1 << 20;
    private static final long SRC = 8 * MIB;
    private static final int SMALL_SLOTS = 64;
    private static final long SMALL_SLOT = 256 * 1024;
    private static final int LARGE_SLOTS = 2;
    private static final long LARGE_SLOT = 8 * MIB;

    private record Peer(Node node, long src, long small, long large, BlockingQueue<Integer> smallFree,
                        BlockingQueue<Integer> largeFree, List<byte[]> metadata) {
    }

    @Test
    void twentyThousandRandomTransfersLoseNoByteAndLeakNothing() throws Exception {
        LeakCheck.Snapshot base = LeakCheck.snapshot();
        long buffersBefore = Buffers.live();
        List<Peer> peers = new ArrayList<>();
        List<String> errors = new CopyOnWriteArrayList<>();
        AtomicLong bytes = new AtomicLong();
        AtomicLong largeCount = new AtomicLong();
        AtomicLong maxSize = new AtomicLong();
        AtomicInteger reads = new AtomicInteger();
        List<Set<String>> expectedNotes = new ArrayList<>();
        long t0 = System.nanoTime();
        try {
            for (int i = 0; i < ENGINES; i++) {
                Node n = new Node(Node.config("soak-" + i));
                RegisteredMemory src = n.randomRegion(SRC, 1000 + i);
                long small = n.alloc(SMALL_SLOTS * SMALL_SLOT);
                long large = n.alloc(LARGE_SLOTS * LARGE_SLOT);
                List<byte[]> md = List.of(src.publicMetadata(), n.register(small, SMALL_SLOTS * SMALL_SLOT).publicMetadata(),
                        n.register(large, LARGE_SLOTS * LARGE_SLOT).publicMetadata());
                BlockingQueue<Integer> sf = new ArrayBlockingQueue<>(SMALL_SLOTS);
                BlockingQueue<Integer> lf = new ArrayBlockingQueue<>(LARGE_SLOTS);
                for (int s = 0; s < SMALL_SLOTS; s++) {
                    sf.add(s);
                }
                for (int s = 0; s < LARGE_SLOTS; s++) {
                    lf.add(s);
                }
                peers.add(new Peer(n, src.descriptor().address(), small, large, sf, lf, md));
                expectedNotes.add(ConcurrentHashMap.newKeySet());
            }
            for (Peer p : peers) {
                for (Peer q : peers) {
                    if (p != q) {
                        p.node().engine.loadPeer(q.node().name, q.node().engine.connInfo());
                        for (byte[] md : q.metadata()) {
                            p.node().engine.loadRemoteMetadata(q.node().name, md);
                        }
                    }
                }
            }

            AtomicInteger next = new AtomicInteger();
            List<Thread> drivers = new ArrayList<>();
            for (int d = 0; d < THREADS; d++) {
                int seed = d;
                Thread t = new Thread(() -> {
                    SplittableRandom rnd = new SplittableRandom(0x50A4L + seed);
                    int id;
                    while ((id = next.getAndIncrement()) < TRANSFERS && errors.isEmpty()) {
                        try {
                            one(id, rnd, peers, expectedNotes, bytes, largeCount, maxSize, reads, errors);
                        } catch (Exception | AssertionError e) {
                            errors.add("transfer " + id + ": " + e);
                        }
                        if (id > 0 && id % 5000 == 0) {
                            System.out.printf("[soak] %d transfers, %d MiB, %d ms%n", id, bytes.get() >> 20,
                                    (System.nanoTime() - t0) / 1_000_000);
                        }
                    }
                }, "soak-driver-" + d);
                drivers.add(t);
                t.start();
            }
            for (Thread t : drivers) {
                t.join();
            }
            assertThat(errors).as("transfer errors").isEmpty();

            // every notification exactly once, at the peer, from the initiator
            int expectedTotal = expectedNotes.stream().mapToInt(Set::size).sum();
            List<Set<String>> got = new ArrayList<>();
            for (int i = 0; i < ENGINES; i++) {
                got.add(new HashSet<>());
            }
            AtomicInteger duplicates = new AtomicInteger();
            Node.eventually(Duration.ofSeconds(10), () -> {
                for (int i = 0; i < ENGINES; i++) {
                    for (Notification n : peers.get(i).node().engine.drainNotifications()) {
                        if (!got.get(i).add(n.agent() + "/" + new String(n.message(), StandardCharsets.UTF_8))) {
                            duplicates.incrementAndGet();
                        }
                    }
                }
                return got.stream().mapToInt(Set::size).sum() >= expectedTotal;
            });
            assertThat(duplicates.get()).as("duplicate notifications").isZero();
            for (int i = 0; i < ENGINES; i++) {
                assertThat(got.get(i)).as("notifications at soak-%d", i).isEqualTo(expectedNotes.get(i));
            }

            for (Peer p : peers) {
                Node n = p.node();
                assertThat(Node.eventually(Duration.ofSeconds(5), () -> n.stats().outstandingRequests() == 0
                        && n.stats().liveOperations() == 0 && n.stats().notificationsQueued() == 0))
                        .as("%s idle after the soak", n).isTrue();
                assertThat(n.stats().connections()).isEqualTo(ENGINES - 1);
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("[soak] %d transfers (%d READ, %d WRITE, %d of 256 KiB..8 MiB, largest %d B), %d MiB, "
                            + "%d notifications, %d engines, %d threads: %d ms, 0 bytes lost%n",
                    TRANSFERS, reads.get(), TRANSFERS - reads.get(), largeCount.get(), maxSize.get(), bytes.get() >> 20,
                    expectedTotal, ENGINES, THREADS, ms);
        } finally {
            for (Peer p : peers) {
                p.node().close();
            }
        }
        for (Peer p : peers) {
            Node n = p.node();
            assertThat(n.stats().registeredRegions()).as("%s regions", n.name).isZero();
            assertThat(n.stats().connections() + n.stats().outstandingRequests() + n.stats().liveOperations()).isZero();
            assertThat(n.transport.comms() + n.transport.listeners() + n.transport.registrations())
                    .as("%s transport resources", n.name).isZero();
            assertThat(n.memory.liveAllocations()).as("%s engine allocations", n.name).isZero();
        }
        assertThat(Buffers.live()).as("native test buffers").isEqualTo(buffersBefore);
        LeakCheck.assertBackTo(base, 0);
    }

    private static void one(int id, SplittableRandom rnd, List<Peer> peers, List<Set<String>> expectedNotes,
                            AtomicLong bytes, AtomicLong largeCount, AtomicLong maxSize, AtomicInteger reads,
                            List<String> errors) throws InterruptedException {
        int i = rnd.nextInt(ENGINES);
        int j = (i + 1 + rnd.nextInt(ENGINES - 1)) % ENGINES;
        boolean write = rnd.nextBoolean();
        int dice = rnd.nextInt(1000);
        long len;
        boolean large = false;
        if (dice < 940) {
            len = 1 + rnd.nextInt(4096);
        } else if (dice < 990) {
            len = 4097 + rnd.nextInt((int) SMALL_SLOT - 4096);
        } else {
            large = true;
            len = dice == 999 ? LARGE_SLOT : 256 * 1024 + rnd.nextLong(LARGE_SLOT - 256 * 1024 + 1);
        }
        Peer initiator = peers.get(i);
        Peer other = peers.get(j);
        Peer from = write ? initiator : other;
        Peer to = write ? other : initiator;
        BlockingQueue<Integer> pool = large ? to.largeFree() : to.smallFree();
        int slot = pool.take();
        try {
            long dst = large ? to.large() + slot * LARGE_SLOT : to.small() + slot * SMALL_SLOT;
            long src = from.src() + rnd.nextLong(SRC - len + 1);
            byte[] note = null;
            if (rnd.nextInt(5) == 0) {
                note = ("n" + id).getBytes(StandardCharsets.UTF_8);
                expectedNotes.get(j).add(initiator.node().name + "/n" + id);
            }
            var session = initiator.node().engine.session(other.node().name);
            var local = List.of(Node.dram(write ? src : dst, len));
            var remote = List.of(Node.dram(write ? dst : src, len));
            Transfer t = write ? session.write(local, remote, note) : session.read(local, remote, note);
            TransferStatus s = Node.await(t, Duration.ofSeconds(60));
            if (s != TransferStatus.DONE) {
                errors.add("transfer " + id + " " + t + ": " + t.error());
                return;
            }
            long diff = Buffers.firstDifference(src, dst, len);
            if (diff >= 0) {
                errors.add("transfer " + id + " (" + (write ? "WRITE" : "READ") + " " + len + " B): byte " + diff + " differs");
            }
            bytes.addAndGet(len);
            if (large) {
                largeCount.incrementAndGet();
            }
            if (!write) {
                reads.incrementAndGet();
            }
            maxSize.accumulateAndGet(len, Math::max);
        } finally {
            pool.put(slot);
        }
    }
}
