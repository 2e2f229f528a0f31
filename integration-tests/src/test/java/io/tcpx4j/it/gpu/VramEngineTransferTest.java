package io.tcpx4j.it.gpu;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.cuda.CudaDeviceMemory;
import io.tcpx4j.cuda.CudaScatterGather;
import io.tcpx4j.cuda.GpuTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two engines on one GPU over the loopback transport, each with its own {@link CudaScatterGather}: a
 * 1 GiB WRITE and a 1 GiB READ, VRAM to VRAM, every byte compared on the host after the target's
 * notification, and the poisoned guard pages around each destination untouched. The data path is
 * the real one: CUDA sources staged to pinned memory, sent over TCP, received into host-mapped
 * bounce pages and scattered into VRAM by the unpack kernel.
 */
@GpuTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class VramEngineTransferTest {

    private static final long GIB = 1L << 30;
    private static final long GUARD = 64 << 10;
    private static final byte POISON = (byte) 0xA5;
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    private CudaDeviceMemory memory;
    private GpuNode a;
    private GpuNode b;
    private MemoryDescriptor aSrc;
    private MemoryDescriptor aDst;
    private MemoryDescriptor bSrc;
    private MemoryDescriptor bDst;

    /** The loopback transports' I/O threads. */
    int ioThreads() {
        return 2;
    }

    @BeforeAll
    void open() {
        memory = new CudaDeviceMemory();
        a = new GpuNode("gpu-a", memory, 0, 2, 2, ioThreads());
        b = new GpuNode("gpu-b", memory, 0, 2, 2, ioThreads());
        a.engine.loadPeer(b.engine.name(), b.engine.connInfo());
        b.engine.loadPeer(a.engine.name(), a.engine.connInfo());
        aSrc = a.allocate(GIB);
        aDst = a.allocate(GIB + 2 * GUARD);
        bSrc = b.allocate(GIB);
        bDst = b.allocate(GIB + 2 * GUARD);
        a.engine.register(aSrc);
        a.engine.register(aDst);
        share(b, a, bSrc);
        share(b, a, bDst);
        a.fillRandom(aSrc, 1);
        b.fillRandom(bSrc, 2);
    }

    @AfterAll
    void close() {
        if (b != null) {
            b.close();
        }
        if (a != null) {
            a.close();
        }
        if (memory != null) {
            memory.close();
        }
    }

    @Test
    void writeOneGibVramToVramLandsEveryByteBeforeTheNotification() throws InterruptedException {
        b.poison(bDst, POISON);
        long kernelsBefore = launches(b);
        Transfer t = a.engine.session(b.engine.name()).write(List.of(aSrc), List.of(bDst.slice(GUARD, GIB)),
                bytes("write-1g"));

        assertThat(t.await(TIMEOUT)).as("write %s", t.error()).isEqualTo(TransferStatus.DONE);
        List<Notification> notes = awaitNotifications(b, 1);
        assertThat(notes).containsExactly(new Notification(a.engine.name(), bytes("write-1g")));
        assertThat(b.mismatch(bDst.slice(GUARD, GIB), aSrc)).as("first differing byte").isEqualTo(-1);
        assertThat(b.firstNot(bDst.slice(0, GUARD), POISON)).as("guard before").isEqualTo(-1);
        assertThat(b.firstNot(bDst.slice(GUARD + GIB, GUARD), POISON)).as("guard after").isEqualTo(-1);
        assertThat(launches(b)).as("unpack kernel launches on the target").isGreaterThan(kernelsBefore);
        assertThat(awaitNotifications(b, 0)).as("exactly one notification").isEmpty();
        t.release();
    }

    @Test
    void readOneGibVramToVramLandsEveryByteAndNotifiesTheTarget() throws InterruptedException {
        a.poison(aDst, POISON);
        long kernelsBefore = launches(a);
        Transfer t = a.engine.session(b.engine.name()).read(List.of(aDst.slice(GUARD, GIB)), List.of(bSrc),
                bytes("read-1g"));

        assertThat(t.await(TIMEOUT)).as("read %s", t.error()).isEqualTo(TransferStatus.DONE);
        assertThat(a.mismatch(aDst.slice(GUARD, GIB), bSrc)).as("first differing byte").isEqualTo(-1);
        assertThat(a.firstNot(aDst.slice(0, GUARD), POISON)).as("guard before").isEqualTo(-1);
        assertThat(a.firstNot(aDst.slice(GUARD + GIB, GUARD), POISON)).as("guard after").isEqualTo(-1);
        assertThat(launches(a)).as("unpack kernel launches on the initiator").isGreaterThan(kernelsBefore);
        List<Notification> notes = awaitNotifications(b, 1);
        assertThat(notes).containsExactly(new Notification(a.engine.name(), bytes("read-1g")));
        assertThat(awaitNotifications(b, 0)).as("exactly one notification").isEmpty();
        t.release();
    }

    private static void share(GpuNode owner, GpuNode other, MemoryDescriptor d) {
        RegisteredMemory r = owner.engine.register(d);
        other.engine.loadRemoteMetadata(owner.engine.name(), r.publicMetadata());
    }

    private static long launches(GpuNode node) {
        return ((CudaScatterGather) node.unpacker).launches();
    }

    /** Drains {@code node}'s notifications until {@code count} arrived (10 s), or for 200 ms when 0. */
    private static List<Notification> awaitNotifications(GpuNode node, int count) throws InterruptedException {
        List<Notification> got = new ArrayList<>();
        long deadline = System.nanoTime() + (count == 0 ? Duration.ofMillis(200) : Duration.ofSeconds(10)).toNanos();
        while (System.nanoTime() < deadline && (count == 0 || got.size() < count)) {
            got.addAll(node.engine.drainNotifications());
            Thread.sleep(1);
        }
        return got;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
