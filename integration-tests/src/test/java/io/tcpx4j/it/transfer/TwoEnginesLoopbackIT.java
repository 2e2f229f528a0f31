package io.tcpx4j.it.transfer;

import io.tcpx4j.api.EngineStats;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two engines in one JVM, each with its own loopback transport in devmem mode (every receive lands in
 * permuted bounce pages and is unpacked), move 256 MiB of DRAM by WRITE and by READ in both
 * directions. Every byte is checked against the seeded pattern, destinations start poisoned and are
 * framed by guard bands that must stay poisoned, and each transfer delivers exactly one notification
 * to its target, only once the data is complete.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TwoEnginesLoopbackIT {

    static final long SIZE = 256L << 20;
    static final long GUARD = 64L << 10;
    private static final Duration DEADLINE = Duration.ofSeconds(90);

    LoopbackNode alpha;
    LoopbackNode beta;
    private long alphaBase;
    private long betaBase;

    /** The transports' settings: the defaults, devmem on. */
    LoopbackConfig transportConfig() {
        return LoopbackConfig.defaults();
    }

    @BeforeAll
    void startEngines() {
        LoopbackConfig transport = transportConfig();
        assertThat(transport.devmem()).as("the faithful TCPX receive path").isTrue();
        alpha = LoopbackNode.start(LoopbackNode.config("alpha"), transport);
        beta = LoopbackNode.start(LoopbackNode.config("beta"), transport);
        alpha.introduce(beta);
        alphaBase = alpha.allocate(SIZE + 2 * GUARD);
        betaBase = beta.allocate(SIZE + 2 * GUARD);
        // the whole span, guards included, is registered: the guards prove the engine writes only
        // where it was asked to, not only where it is allowed to
        RegisteredMemory ra = alpha.register(alphaBase, SIZE + 2 * GUARD);
        RegisteredMemory rb = beta.register(betaBase, SIZE + 2 * GUARD);
        alpha.engine.loadRemoteMetadata("beta", rb.publicMetadata());
        beta.engine.loadRemoteMetadata("alpha", ra.publicMetadata());
    }

    @AfterAll
    void stopEngines() {
        if (alpha != null) {
            alpha.close();
        }
        if (beta != null) {
            beta.close();
        }
    }

    @Test
    void alphaWrites256MiBIntoBeta() throws Exception {
        move(alpha, beta, true, 0x5EED_0001L);
    }

    @Test
    void betaWrites256MiBIntoAlpha() throws Exception {
        move(beta, alpha, true, 0x5EED_0002L);
    }

    @Test
    void alphaReads256MiBFromBeta() throws Exception {
        move(alpha, beta, false, 0x5EED_0003L);
    }

    @Test
    void betaReads256MiBFromAlpha() throws Exception {
        move(beta, alpha, false, 0x5EED_0004L);
    }

    private long data(LoopbackNode n) {
        return (n == alpha ? alphaBase : betaBase) + GUARD;
    }

    /**
     * {@code initiator} posts a WRITE (its data into the target) or a READ (the target's data into its
     * own) with a notification, which the target must receive exactly once, after the last byte.
     */
    void move(LoopbackNode initiator, LoopbackNode target, boolean write, long seed) throws Exception {
        LoopbackNode from = write ? initiator : target;
        LoopbackNode to = write ? target : initiator;
        long src = data(from);
        long dst = data(to);
        Bytes.fill(src, SIZE, seed);
        NativeMemory.fill(dst - GUARD, SIZE + 2 * GUARD, Bytes.POISON);
        byte[] note = ((write ? "write-" : "read-") + Long.toHexString(seed)).getBytes(StandardCharsets.UTF_8);

        MemoryDescriptor local = MemoryDescriptor.dram(write ? src : dst, SIZE);
        MemoryDescriptor remote = MemoryDescriptor.dram(write ? dst : src, SIZE);
        Transfer t = write
                ? initiator.engine.session(target.name()).write(List.of(local), List.of(remote), note)
                : initiator.engine.session(target.name()).read(List.of(local), List.of(remote), note);

        List<Notification> notes = new ArrayList<>();
        long mismatchWhenNotified = Long.MIN_VALUE;
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while ((notes.isEmpty() || !t.status().isTerminal()) && System.nanoTime() < deadline) {
            List<Notification> got = target.engine.drainNotifications();
            if (!got.isEmpty() && notes.isEmpty()) {
                // the moment the target hears of the transfer, every byte must already be in place
                mismatchWhenNotified = Bytes.firstMismatchBetween(src, dst, SIZE);
            }
            notes.addAll(got);
            if (got.isEmpty()) {
                Thread.sleep(1);
            }
        }
        assertThat(t.status()).as("transfer of %d MiB within %s: %s", SIZE >> 20, DEADLINE, t.error())
                .isEqualTo(TransferStatus.DONE);
        assertThat(notes).as("notifications at the target").hasSize(1);
        assertThat(mismatchWhenNotified).as("first byte not yet in place when the notification arrived (-1: none)")
                .isEqualTo(-1L);

        assertThat(Bytes.firstMismatchWithPattern(dst, SIZE, seed)).as("first wrong byte at the destination (-1: none)")
                .isEqualTo(-1L);
        assertThat(Bytes.firstMismatchWithPattern(src, SIZE, seed)).as("first changed byte at the source (-1: none)")
                .isEqualTo(-1L);
        assertThat(Bytes.all(dst - GUARD, GUARD, Bytes.POISON)).as("guard band before the destination").isTrue();
        assertThat(Bytes.all(dst + SIZE, GUARD, Bytes.POISON)).as("guard band after the destination").isTrue();

        // exactly one: nothing more turns up on either engine once things are quiet
        Thread.sleep(200);
        notes.addAll(target.engine.drainNotifications());
        assertThat(notes).containsExactly(new Notification(initiator.name(), note));
        assertThat(initiator.engine.drainNotifications()).as("notifications at the initiator").isEmpty();
        assertQuiet(initiator.engine);
        assertQuiet(target.engine);
    }

    /** No request or operation outlives its transfer (the target of a READ may finish a moment later). */
    private static void assertQuiet(TransferEngine e) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        EngineStats s = e.stats();
        while ((s.outstandingRequests() != 0 || s.liveOperations() != 0) && System.nanoTime() < deadline) {
            Thread.sleep(5);
            s = e.stats();
        }
        assertThat(s.outstandingRequests()).as("%s: requests still held on the transport", e.name()).isZero();
        assertThat(s.liveOperations()).as("%s: live operations", e.name()).isZero();
        assertThat(s.connections()).as("%s: connections", e.name()).isEqualTo(1);
    }
}
