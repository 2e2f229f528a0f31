package io.tcpx4j.it.reliability;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.protocol.RegionMetadata;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bad input from the application: descriptors (unregistered, zero-length, overlapping, misaligned,
 * overflowing, spanning two regions, deregistered), descriptor lists, notifications, metadata and
 * conn-info blobs. Rejected at once with a code, nothing sent; or, where the input is legal but odd
 * (overlaps, odd alignment, zero length), every byte lands exactly where it should and nowhere else.
 */
@Timeout(60)
class BadInputIT {

    private static final int SIZE = 1 << 20;
    private static final int GUARD = 4096;
    private static Node a;
    private static Node b;
    private static long src;
    private static long dstBlock;
    private static long dst;
    private static RegisteredMemory dstRegion;

    @BeforeAll
    static void start() {
        a = new Node(Node.config("in-a"));
        b = new Node(Node.config("in-b"));
        a.meet(b);
        src = a.randomRegion(SIZE, 1).descriptor().address();
        dstBlock = b.alloc(SIZE + 2L * GUARD);
        dst = dstBlock + GUARD;
        dstRegion = b.register(dst, SIZE);
        b.publish(dstRegion, a);
    }

    @AfterAll
    static void stop() {
        b.close();
        a.close();
    }

    private static MemoryDescriptor d(long addr, long len) {
        return MemoryDescriptor.dram(addr, len);
    }

    private static void rejected(Code code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(TransferException.class)
                .extracting(e -> ((TransferException) e).code()).isEqualTo(code);
    }

    private static byte[] poisonTarget() {
        Buffers.fill(dstBlock, SIZE + 2L * GUARD, (byte) 0xA5);
        return Buffers.read(dstBlock, SIZE + 2 * GUARD);
    }

    private static Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remote) {
        Transfer t = a.engine.session("in-b").write(local, remote, null);
        assertThat(Node.await(t, Duration.ofSeconds(30))).as("%s %s", t, t.error()).isEqualTo(TransferStatus.DONE);
        return t;
    }

    @Test
    void descriptorsOutsideRegisteredOrPublishedMemoryAreRefusedBeforeAnythingIsSent() {
        byte[] before = poisonTarget();
        var s = a.engine.session("in-b");
        long unregistered = a.alloc(4096);
        rejected(Code.NOT_FOUND, () -> s.write(List.of(d(unregistered, 16)), List.of(d(dst, 16)), null));
        rejected(Code.NOT_FOUND, () -> s.write(List.of(d(src + SIZE - 8, 16)), List.of(d(dst, 16)), null));
        rejected(Code.NOT_FOUND, () -> s.write(List.of(d(src, 16)), List.of(d(dst - 1, 16)), null));
        rejected(Code.NOT_FOUND, () -> s.write(List.of(d(src, 16)), List.of(d(dst + SIZE - 15, 16)), null));
        rejected(Code.NOT_FOUND, () -> s.read(List.of(d(unregistered, 16)), List.of(d(dst, 16)), null));
        rejected(Code.NOT_FOUND, () -> s.write(List.of(d(unregistered, 0)), List.of(d(dst, 0)), null));
        // VRAM descriptors over DRAM registrations
        rejected(Code.NOT_FOUND, () -> s.write(List.of(new MemoryDescriptor(src, 16, MemoryKind.VRAM, 0)),
                List.of(d(dst, 16)), null));
        // a range spanning two adjacent registrations is in neither
        long two = a.alloc(8192);
        a.register(two, 4096);
        a.register(two + 4096, 4096);
        rejected(Code.NOT_FOUND, () -> s.write(List.of(d(two + 4000, 200)), List.of(d(dst, 200)), null));
        // unknown peers
        rejected(Code.NOT_FOUND, () -> a.engine.session("nobody"));
        assertThat(Buffers.read(dstBlock, SIZE + 2 * GUARD)).isEqualTo(before);
    }

    @Test
    void malformedListsNotificationsAndDescriptorsAreInvalidParamOrMismatch() {
        var s = a.engine.session("in-b");
        rejected(Code.INVALID_PARAM, () -> s.write(List.of(), List.of(), null));
        rejected(Code.MISMATCH, () -> s.write(List.of(d(src, 16)), List.of(d(dst, 16), d(dst + 16, 16)), null));
        rejected(Code.MISMATCH, () -> s.write(List.of(d(src, 16)), List.of(d(dst, 17)), null));
        rejected(Code.INVALID_PARAM, () -> s.write(List.of(d(src, 16)), List.of(d(dst, 16)), new byte[(1 << 20) + 1]));
        rejected(Code.INVALID_PARAM, () -> s.notify(new byte[(1 << 20) + 1]));
        // ranges that wrap around the address space or have negative lengths cannot even be described
        rejected(Code.INVALID_PARAM, () -> d(-16L, 32));
        rejected(Code.INVALID_PARAM, () -> d(-1L, 2));
        rejected(Code.INVALID_PARAM, () -> d(src, -1));
        rejected(Code.INVALID_PARAM, () -> new MemoryDescriptor(src, 16, MemoryKind.DRAM, -1));
        rejected(Code.INVALID_PARAM, () -> a.engine.register(d(src, 0)));
    }

    @Test
    void zeroLengthMisalignedAndOverlappingDescriptorsMoveExactlyTheirBytes() {
        byte[] want = poisonTarget();
        // zero-length descriptors inside registered memory: legal, move nothing
        write(List.of(d(src, 0), d(src + 7, 0)), List.of(d(dst, 0), d(dst + SIZE, 0)));
        assertThat(Buffers.read(dstBlock, SIZE + 2 * GUARD)).isEqualTo(want);
        // odd addresses and lengths across chunk and page boundaries, mixed with empty ones
        long[][] pieces = {{1, 3, 1}, {4093, 5, 4099}, {8191, 0, 12000}, {100_001, 524_289, 300_003}, {SIZE - 1, 1, SIZE - 1}};
        List<MemoryDescriptor> local = new java.util.ArrayList<>();
        List<MemoryDescriptor> remote = new java.util.ArrayList<>();
        byte[] source = Buffers.read(src, SIZE);
        for (long[] p : pieces) {
            local.add(d(src + p[0], p[1]));
            remote.add(d(dst + p[2], p[1]));
            System.arraycopy(source, (int) p[0], want, GUARD + (int) p[2], (int) p[1]);
        }
        write(local, remote);
        assertThat(Arrays.mismatch(Buffers.read(dstBlock, SIZE + 2 * GUARD), want)).as("first wrong byte").isEqualTo(-1);
        // overlapping destinations with the same bytes, and overlapping sources: the union lands, nothing else
        want = poisonTarget();
        write(List.of(d(src + 1000, 5000), d(src + 3000, 5000), d(src + 3000, 100)),
                List.of(d(dst + 1000, 5000), d(dst + 3000, 5000), d(dst + 3000, 100)));
        System.arraycopy(source, 1000, want, GUARD + 1000, 7000);
        assertThat(Arrays.mismatch(Buffers.read(dstBlock, SIZE + 2 * GUARD), want)).as("first wrong byte").isEqualTo(-1);
        // READ into overlapping local ranges
        long back = a.alloc(SIZE);
        a.register(back, SIZE);
        Buffers.fill(back, SIZE, (byte) 0);
        Transfer r = a.engine.session("in-b").read(List.of(d(back, 5000), d(back + 2000, 5000)),
                List.of(d(dst + 1000, 5000), d(dst + 3000, 5000)), null);
        assertThat(Node.await(r, Duration.ofSeconds(30))).isEqualTo(TransferStatus.DONE);
        assertThat(Buffers.firstDifference(back, src + 1000, 7000)).isEqualTo(-1);
    }

    @Test
    void memoryDeregisteredOnEitherSideIsRefusedAndUntouched() {
        byte[] before = poisonTarget();
        long mine = a.alloc(4096);
        RegisteredMemory gone = a.register(mine, 4096);
        gone.close();
        rejected(Code.NOT_FOUND, () -> a.engine.session("in-b").write(List.of(d(mine, 16)), List.of(d(dst, 16)), null));
        // the target deregisters a region the initiator still believes in: refused there, drained
        long theirs = b.alloc(64 * 1024);
        Buffers.fill(theirs, 64 * 1024, (byte) 0x3C);
        RegisteredMemory r = b.register(theirs, 64 * 1024);
        b.publish(r, a);
        r.close();
        Transfer t = a.engine.session("in-b").write(List.of(d(src, 64 * 1024)), List.of(d(theirs, 64 * 1024)), "n".getBytes());
        assertThat(Node.await(t, Duration.ofSeconds(30))).isEqualTo(TransferStatus.FAILED);
        assertThat(t.error()).get().extracting(TransferException::code).isEqualTo(Code.NOT_ALLOWED);
        byte[] still = Buffers.read(theirs, 64 * 1024);
        for (byte x : still) {
            assertThat(x).isEqualTo((byte) 0x3C);
        }
        assertThat(Buffers.read(dstBlock, SIZE + 2 * GUARD)).isEqualTo(before);
        assertThat(b.engine.drainNotifications()).as("no notification for a refused WRITE").isEmpty();
    }

    @Test
    void badMetadataAndConnInfoBlobsAreRejectedAndTheEngineKeepsServing() {
        byte[] good = dstRegion.publicMetadata();
        byte[] conn = b.engine.connInfo();
        for (int n = 0; n < good.length; n++) {
            byte[] cut = Arrays.copyOf(good, n);
            rejected(Code.INVALID_PARAM, () -> a.engine.loadRemoteMetadata("in-b", cut));
        }
        for (int n = 0; n < conn.length; n++) {
            byte[] cut = Arrays.copyOf(conn, n);
            rejected(Code.INVALID_PARAM, () -> a.engine.loadPeer("in-b", cut));
        }
        rejected(Code.INVALID_PARAM, () -> a.engine.loadRemoteMetadata("in-b", Arrays.copyOf(good, good.length + (1 << 20))));
        rejected(Code.INVALID_PARAM, () -> a.engine.loadPeer("in-b", Arrays.copyOf(conn, conn.length + 1)));
        rejected(Code.INVALID_PARAM, () -> a.engine.loadRemoteMetadata("in-b", null));
        byte[] newer = good.clone();
        newer[4] = 2; // version byte after the magic
        rejected(Code.NOT_SUPPORTED, () -> a.engine.loadRemoteMetadata("in-b", newer));
        byte[] newerConn = conn.clone();
        newerConn[4] = 3; // versions 1 (one agent) and 2 (several) are read
        rejected(Code.NOT_SUPPORTED, () -> a.engine.loadPeer("in-b", newerConn));
        rejected(Code.INVALID_PARAM, () -> a.engine.loadRemoteMetadata("in-a-typo", good)); // owner mismatch
        rejected(Code.INVALID_PARAM, () -> a.engine.loadPeer("someone-else", conn));
        // a blob whose range wraps around the address space
        ByteBuffer wrap = ByteBuffer.wrap(good.clone());
        wrap.putLong(good.length - 16, -4096L).putLong(good.length - 8, 8192L);
        rejected(Code.INVALID_PARAM, () -> a.engine.loadRemoteMetadata("in-b", wrap.array()));
        // a forged blob for memory the peer never registered: accepted locally, refused by the peer
        byte[] forged = new RegionMetadata("in-b", d(dstBlock, GUARD)).encode();
        a.engine.loadRemoteMetadata("in-b", forged);
        byte[] before = poisonTarget();
        Transfer t = a.engine.session("in-b").write(List.of(d(src, 100)), List.of(d(dstBlock, 100)), null);
        assertThat(Node.await(t, Duration.ofSeconds(30))).isEqualTo(TransferStatus.FAILED);
        assertThat(t.error()).get().extracting(TransferException::code).isEqualTo(Code.NOT_ALLOWED);
        assertThat(Buffers.read(dstBlock, SIZE + 2 * GUARD)).isEqualTo(before);
        a.engine.unloadRemoteMetadata("in-b", forged);
        // and the engine still serves
        write(List.of(d(src, 4096)), List.of(d(dst, 4096)));
    }
}
