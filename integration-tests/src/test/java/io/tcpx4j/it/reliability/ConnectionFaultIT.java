package io.tcpx4j.it.reliability;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Faults inside one JVM, two engines over their own loopback transports: a data connection reset
 * after N bytes (LoopbackConfig.Faults), every request slot taken, a release in mid-flight, an engine
 * closed under load.
 */
@Timeout(120)
class ConnectionFaultIT {

    private static final long MIB = 1 << 20;

    private static LoopbackConfig faults(long dropAfterBytes, Duration delay) {
        return LoopbackConfig.defaults().withFaults(new LoopbackConfig.Faults(dropAfterBytes, delay, false));
    }

    @Test
    void dataConnectionDroppedAfterNBytesFailsTheTransferWithoutItsNotificationAndTheNextOneReconnects() {
        LeakCheck.Snapshot base = LeakCheck.snapshot();
        try (Node a = new Node(Node.config("drop-a"), faults(3 * MIB, Duration.ZERO));
             Node b = new Node(Node.config("drop-b"))) {
            a.meet(b);
            RegisteredMemory src = a.randomRegion(16 * MIB, 1);
            long dst = b.alloc(16 * MIB);
            Buffers.fill(dst, 16 * MIB, (byte) 0);
            RegisteredMemory dstRegion = b.register(dst, 16 * MIB);
            b.publish(dstRegion, a);
            var s = a.engine.session("drop-b");

            Transfer big = s.write(List.of(Node.dram(src.descriptor().address(), 16 * MIB)), List.of(Node.dram(dst, 16 * MIB)),
                    "big".getBytes());
            assertThat(Node.await(big, Duration.ofSeconds(10))).isEqualTo(TransferStatus.FAILED);
            assertThat(big.error()).get().extracting(TransferException::code).isEqualTo(TransferException.Code.REMOTE_DISCONNECT);
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> a.stats().connections() == 0 && b.stats().connections() == 0
                    && a.stats().liveOperations() == 0 && b.stats().liveOperations() == 0
                    && a.transport.comms() == 0 && b.transport.comms() == 0
                    && a.transport.registrations() == 0 && b.transport.registrations() == 0))
                    .as("both sides released the broken connection: %s / %s", a, b).isTrue();

            // a new connection has a fresh byte budget: 1 MiB goes through
            Transfer small = s.write(List.of(Node.dram(src.descriptor().address(), MIB)), List.of(Node.dram(dst, MIB)),
                    "small".getBytes());
            assertThat(Node.await(small, Duration.ofSeconds(10))).as("%s", small.error()).isEqualTo(TransferStatus.DONE);
            assertThat(Buffers.firstDifference(src.descriptor().address(), dst, MIB)).isEqualTo(-1);
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> b.stats().notificationsQueued() >= 1)).isTrue();
            // the failed WRITE's notification never arrives: a notification means "data landed"
            assertThat(b.engine.drainNotifications()).containsExactly(new Notification("drop-a", "small".getBytes()));
            System.out.println("[faults] dropAfterBytes: 16 MiB WRITE reset after 3 MiB -> REMOTE_DISCONNECT, no notification; next WRITE ok");
        }
        LeakCheck.assertBackTo(base, 0);
    }

    @Test
    void everySlotTakenByThousandsOfConcurrentTransfersAndDescriptors() throws Exception {
        try (Node a = new Node(Node.config("slots-a"));
             Node b = new Node(Node.config("slots-b"))) {
            a.meet(b);
            int n = 1000;
            int len = 16 * 1024;
            RegisteredMemory aSrc = a.randomRegion((long) n * len, 1);
            RegisteredMemory bSrc = b.randomRegion((long) n * len, 2);
            long aDst = a.alloc((long) n * len);
            long bDst = b.alloc((long) n * len);
            a.register(aDst, (long) n * len);
            RegisteredMemory bDstRegion = b.register(bDst, (long) n * len);
            b.publish(bDstRegion, a);
            b.publish(bSrc, a);
            long as = aSrc.descriptor().address();
            long bs = bSrc.descriptor().address();
            var s = a.engine.session("slots-b");
            // 1000 WRITEs and 1000 READs posted from 4 threads at once, far beyond 16 slots per comm
            List<Transfer> all = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> posters = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                int first = p;
                Thread t = new Thread(() -> {
                    for (int i = first; i < n; i += 4) {
                        long off = (long) i * len;
                        all.add(s.write(List.of(Node.dram(as + off, len)), List.of(Node.dram(bDst + off, len)), null));
                        all.add(s.read(List.of(Node.dram(aDst + off, len)), List.of(Node.dram(bs + off, len)), null));
                    }
                });
                posters.add(t);
                t.start();
            }
            for (Thread t : posters) {
                t.join();
            }
            // and one transfer of 4096 descriptors of 1 KiB each, scattered
            List<MemoryDescriptor> local = new ArrayList<>();
            List<MemoryDescriptor> remote = new ArrayList<>();
            long[] scatter = new long[4096];
            for (int i = 0; i < 4096; i++) {
                scatter[i] = (long) ((i * 2654435761L) % 4096) * 1024; // a permutation of the 1 KiB slots
                local.add(Node.dram(as + (long) i * 1024, 1024));
                remote.add(Node.dram(bDst + scatter[i], 1024));
            }
            for (Transfer t : all) {
                assertThat(Node.await(t, Duration.ofSeconds(60))).as("%s %s", t, t.error()).isEqualTo(TransferStatus.DONE);
            }
            assertThat(Buffers.firstDifference(as, bDst, (long) n * len)).as("WRITEs").isEqualTo(-1);
            assertThat(Buffers.firstDifference(bs, aDst, (long) n * len)).as("READs").isEqualTo(-1);
            Transfer many = s.write(local, remote, null);
            assertThat(Node.await(many, Duration.ofSeconds(60))).as("%s", many.error()).isEqualTo(TransferStatus.DONE);
            for (int i = 0; i < 4096; i++) {
                assertThat(Buffers.firstDifference(as + (long) i * 1024, bDst + scatter[i], 1024)).as("descriptor %d", i).isEqualTo(-1);
            }
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> a.stats().outstandingRequests() == 0
                    && b.stats().outstandingRequests() == 0 && a.stats().liveOperations() == 0 && b.stats().liveOperations() == 0))
                    .isTrue();
            System.out.println("[faults] slot exhaustion: 2000 concurrent transfers + one of 4096 descriptors, all DONE and verified");
        }
    }

    @Test
    void releaseInFlightNeverBlocksEndsReleasedAndTheConnectionStaysUp() throws Exception {
        // every request completes 300 ms late, so the transfers are surely in flight when released
        try (Node a = new Node(Node.config("rel-a"), faults(-1, Duration.ofMillis(300)));
             Node b = new Node(Node.config("rel-b"))) {
            a.meet(b);
            RegisteredMemory src = a.randomRegion(32 * MIB, 1);
            RegisteredMemory remote = b.randomRegion(32 * MIB, 2);
            long back = a.alloc(32 * MIB);
            a.register(back, 32 * MIB);
            b.publish(remote, a);
            var s = a.engine.session("rel-b");
            // above the inline limit, so that the data channels are up before the comms are counted
            Transfer warm = s.write(List.of(Node.dram(src.descriptor().address(), MIB)),
                    List.of(Node.dram(remote.descriptor().address(), MIB)), null);
            assertThat(Node.await(warm, Duration.ofSeconds(10))).isEqualTo(TransferStatus.DONE);
            long commsOpened = a.transport.commsOpened();

            Transfer w = s.write(List.of(Node.dram(src.descriptor().address(), 32 * MIB)),
                    List.of(Node.dram(remote.descriptor().address(), 32 * MIB)), "w".getBytes());
            Transfer r = s.read(List.of(Node.dram(back, 32 * MIB)), List.of(Node.dram(remote.descriptor().address(), 32 * MIB)), null);
            long worst = 0;
            for (Transfer t : List.of(w, r)) {
                long t0 = System.nanoTime();
                t.release();
                t.release(); // idempotent
                worst = Math.max(worst, System.nanoTime() - t0);
                assertThat(t.status()).isEqualTo(TransferStatus.RELEASED);
            }
            assertThat(worst).as("release() blocks for nothing (ns)").isLessThan(TimeUnit.MILLISECONDS.toNanos(50));
            for (Transfer t : List.of(w, r)) {
                try {
                    t.completion().toCompletableFuture().get(30, TimeUnit.SECONDS);
                    throw new AssertionError("a released transfer completed normally");
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(TransferException.class);
                    assertThat(((TransferException) e.getCause()).code()).isEqualTo(TransferException.Code.CANCELED);
                }
                assertThat(t.status()).as("RELEASED is the end, whatever the engine saw afterwards").isEqualTo(TransferStatus.RELEASED);
            }
            Transfer after = s.write(List.of(Node.dram(src.descriptor().address(), MIB)),
                    List.of(Node.dram(remote.descriptor().address(), MIB)), null);
            assertThat(Node.await(after, Duration.ofSeconds(30))).isEqualTo(TransferStatus.DONE);
            assertThat(a.transport.commsOpened()).as("same connection, no reconnect").isEqualTo(commsOpened);
            assertThat(a.stats().connections()).isEqualTo(1);
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> a.stats().liveOperations() == 0
                    && b.stats().liveOperations() == 0 && a.stats().outstandingRequests() == 0)).isTrue();
            System.out.printf("[faults] release: 2 x 32 MiB released in flight, worst release() %d us, connection kept%n", worst / 1000);
        }
    }

    @Test
    void closeWithTransfersInFlightCancelsThemWithinTheShutdownTimeout() throws Exception {
        LeakCheck.Snapshot base = LeakCheck.snapshot();
        Duration shutdown = Node.config("x").shutdownTimeout();
        try (Node b = new Node(Node.config("close-b"))) {
            Node a = new Node(Node.config("close-a"), faults(-1, Duration.ofMillis(200)));
            List<Transfer> inFlight = new ArrayList<>();
            try {
                a.meet(b);
                RegisteredMemory src = a.randomRegion(8 * MIB, 1);
                RegisteredMemory remote = b.randomRegion(8 * MIB, 2);
                long back = a.alloc(8 * MIB);
                a.register(back, 8 * MIB);
                b.publish(remote, a);
                var s = a.engine.session("close-b");
                for (int i = 0; i < 20; i++) {
                    inFlight.add(i % 2 == 0
                            ? s.write(List.of(Node.dram(src.descriptor().address(), 8 * MIB)), List.of(Node.dram(remote.descriptor().address(), 8 * MIB)), null)
                            : s.read(List.of(Node.dram(back, 8 * MIB)), List.of(Node.dram(remote.descriptor().address(), 8 * MIB)), null));
                }
                assertThat(Node.eventually(Duration.ofSeconds(10), () -> a.stats().connections() == 1 && a.stats().liveOperations() > 0)).isTrue();
            } finally {
                long t0 = System.nanoTime();
                a.close();
                long closeMs = (System.nanoTime() - t0) / 1_000_000;
                System.out.printf("[faults] close with %d transfers in flight returned in %d ms (shutdownTimeout %d ms)%n",
                        inFlight.size(), closeMs, shutdown.toMillis());
                assertThat(closeMs).as("close() time (ms)").isLessThanOrEqualTo(shutdown.toMillis());
            }
            for (Transfer t : inFlight) {
                assertThat(t.status().isTerminal()).as("%s ended by close()", t).isTrue();
                if (t.status() != TransferStatus.DONE) {
                    assertThat(t.error()).get().extracting(TransferException::code).isEqualTo(TransferException.Code.CANCELED);
                }
            }
            assertThat(inFlight).as("close() cancelled something").anyMatch(t -> t.status() == TransferStatus.FAILED);
            assertThat(a.memory.liveAllocations()).as("engine allocations after close").isZero();
            assertThat(a.transport.comms() + a.transport.listeners() + a.transport.registrations()).isZero();
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> b.stats().connections() == 0
                    && b.stats().liveOperations() == 0 && b.transport.comms() == 0 && b.transport.registrations() == 0))
                    .as("the peer of the closed engine cleans up too: %s", b).isTrue();
        }
        LeakCheck.assertBackTo(base, 0);
    }
}
