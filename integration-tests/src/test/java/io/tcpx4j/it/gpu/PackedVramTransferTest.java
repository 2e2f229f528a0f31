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
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * KV-cache-shaped transfers in VRAM on one GPU, two engines over the loopback transport: many small
 * descriptors share packed chunks, gathered on the sender by the unpack kernel into device staging and
 * scattered on the receiver by the unpack kernel from the bounce pages straight into the descriptors.
 * Sources or destinations back to back (sent or received in place) and the other side in reverse order
 * (through the staging buffers; destinations with a guard after each), both in reverse order, or both back
 * to back (merged into one descriptor before chunking); every descriptor and every guard compared on the
 * host, the notification after the last byte.
 */
@GpuTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PackedVramTransferTest {

    private static final int KIB = 1024;
    private static final long GUARD = 4 * KIB;
    private static final byte POISON = (byte) 0xA5;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private CudaDeviceMemory memory;
    private GpuNode a;
    private GpuNode b;

    @BeforeAll
    void open() {
        memory = new CudaDeviceMemory();
        a = new GpuNode("packed-a", memory, 0, 2, 2, 2);
        b = new GpuNode("packed-b", memory, 0, 2, 2, 2);
        a.engine.loadPeer(b.engine.name(), b.engine.connInfo());
        b.engine.loadPeer(a.engine.name(), a.engine.connInfo());
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

    @ParameterizedTest(name = "write {0}, sources apart {1}, destinations apart {2}, {3}")
    @CsvSource({"true, false, true, kv", "true, true, false, kv", "true, true, true, kv", "true, false, false, kv",
        "false, false, true, kv", "false, true, false, kv", "false, true, true, kv",
        "true, true, true, mixed", "false, true, true, mixed"})
    void packedDescriptorsLandEveryByteInPlace(boolean write, boolean sourcesApart, boolean destinationsApart,
                                               String shape) throws InterruptedException {
        long[] sizes = shape.equals("kv") ? repeat(16 * KIB, 256)
                : new long[] {16 * KIB, 3, 0, 16 * KIB, 5000, 32 * KIB, 1, 16 * KIB + 7, 1024 * KIB + 5, 4 * KIB, 8 * KIB,
                    12 * KIB, 20 * KIB, 28 * KIB, 2 * KIB};
        long total = Arrays.stream(sizes).sum();
        GpuNode src = write ? a : b;
        GpuNode dst = write ? b : a;
        MemoryDescriptor srcBuf = src.allocate(total);
        MemoryDescriptor dstBuf = dst.allocate(total + GUARD * (sizes.length + 1L));
        src.fillRandom(srcBuf, 7 + sizes.length);
        dst.poison(dstBuf, POISON);
        RegisteredMemory srcReg = register(src, srcBuf);
        RegisteredMemory dstReg = register(dst, dstBuf);
        MemoryDescriptor[] from = new MemoryDescriptor[sizes.length];
        MemoryDescriptor[] to = new MemoryDescriptor[sizes.length];
        long so = 0;
        long dOff = GUARD;
        for (int k = 0; k < sizes.length; k++) {
            int i = sourcesApart ? sizes.length - 1 - k : k;
            from[i] = srcBuf.slice(so, sizes[i]);
            so += sizes[i];
            int j = destinationsApart ? sizes.length - 1 - k : k;
            to[j] = dstBuf.slice(dOff, sizes[j]);
            dOff += sizes[j] + (destinationsApart ? GUARD : 0);
        }
        long senderLaunches = launches(src);
        byte[] note = ("packed-" + write + sourcesApart + destinationsApart + shape).getBytes(StandardCharsets.UTF_8);
        Transfer t = write ? a.engine.session(b.engine.name()).write(List.of(from), List.of(to), note)
                : a.engine.session(b.engine.name()).read(List.of(to), List.of(from), note);

        assertThat(t.await(TIMEOUT)).as("transfer %s", t.error()).isEqualTo(TransferStatus.DONE);
        assertThat(awaitNotifications(b, 1)).containsExactly(new Notification(a.engine.name(), note));
        for (int i = 0; i < sizes.length; i++) {
            assertThat(dst.mismatch(to[i], from[i])).as("descriptor %d (%d bytes): first differing byte", i, sizes[i])
                    .isEqualTo(-1);
        }
        assertThat(dst.firstNot(dstBuf.slice(0, GUARD), POISON)).as("guard before").isEqualTo(-1);
        if (destinationsApart) {
            for (int i = 0; i < sizes.length; i++) {
                long after = to[i].address() - dstBuf.address() + sizes[i];
                assertThat(dst.firstNot(dstBuf.slice(after, GUARD), POISON)).as("guard after %d", i).isEqualTo(-1);
            }
        } else {
            assertThat(dst.firstNot(dstBuf.slice(GUARD + total, GUARD), POISON)).as("guard after").isEqualTo(-1);
        }
        if (sourcesApart) {
            // the sender gathered the packed chunks with the unpack kernel
            assertThat(launches(src)).as("gather launches on the sender").isGreaterThan(senderLaunches);
        } else if (!destinationsApart) {
            // back to back on both sides: one merged descriptor, nothing to gather
            assertThat(launches(src)).as("gather launches on the sender").isEqualTo(senderLaunches);
        }
        t.release();
        srcReg.close();
        dstReg.close();
    }

    private RegisteredMemory register(GpuNode owner, MemoryDescriptor d) {
        RegisteredMemory r = owner.engine.register(d);
        GpuNode other = owner == a ? b : a;
        other.engine.loadRemoteMetadata(owner.engine.name(), r.publicMetadata());
        return r;
    }

    private static long[] repeat(long size, int n) {
        long[] out = new long[n];
        Arrays.fill(out, size);
        return out;
    }

    private static long launches(GpuNode node) {
        return ((CudaScatterGather) node.unpacker).launches();
    }

    private static List<Notification> awaitNotifications(GpuNode node, int count) throws InterruptedException {
        List<Notification> got = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline && got.size() < count) {
            got.addAll(node.engine.drainNotifications());
            Thread.sleep(1);
        }
        return got;
    }
}
