package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EngineTransferTest {

    private static final int CHUNK = EngineConfig.DEFAULT_CHUNK;
    private static final byte POISON = (byte) 0xA5;
    private static final int GUARD = 4096;

    private final EnginePair pair = new EnginePair();

    @AfterEach
    void close() {
        pair.close();
    }

    private static MemoryDescriptor dram(long addr, long len) {
        return MemoryDescriptor.dram(addr, len);
    }

    /**
     * Moves {@code size} bytes from src (on one engine) into a poisoned destination with guard bands on
     * the other, verifying every byte and that the guard bands stay poisoned.
     */
    private void roundTrip(boolean write, long size) {
        long src = pair.randomBuffer(size);
        long dstBase = pair.poisoned(size + 2L * GUARD, POISON);
        long dst = dstBase + GUARD;
        // alpha initiates; for a WRITE the source is alpha's, for a READ it is beta's
        Engine srcOwner = write ? pair.a : pair.b;
        Engine dstOwner = write ? pair.b : pair.a;
        RegisteredMemory srcRegion = srcOwner.register(dram(src, Math.max(size, 1)));
        RegisteredMemory dstRegion = dstOwner.register(dram(dstBase, size + 2L * GUARD));
        pair.a.loadRemoteMetadata("beta", (write ? dstRegion : srcRegion).publicMetadata());
        byte[] note = ("done-" + size).getBytes(StandardCharsets.UTF_8);
        Transfer t = write
                ? pair.a.session("beta").write(List.of(dram(src, size)), List.of(dram(dst, size)), note)
                : pair.a.session("beta").read(List.of(dram(dst, size)), List.of(dram(src, size)), note);
        List<Notification> notes = new ArrayList<>();
        // the notification must never be visible before the data is complete
        assertThat(pair.pump(() -> {
            List<Notification> got = pair.b.drainNotifications();
            if (!got.isEmpty()) {
                assertThat(EnginePair.read(dst, size)).as("data in place when the notification arrives")
                        .isEqualTo(EnginePair.read(src, size));
            }
            notes.addAll(got);
            return t.status().isTerminal() && !notes.isEmpty();
        })).as("transfer and notification within the deadline").isTrue();
        assertThat(t.status()).isEqualTo(TransferStatus.DONE);
        assertThat(EnginePair.read(dst, size)).isEqualTo(EnginePair.read(src, size));
        assertGuardsIntact(dstBase, size);
        pair.pumpRounds(200);
        notes.addAll(pair.b.drainNotifications());
        assertThat(notes).containsExactly(new Notification("alpha", note));
    }

    private static void assertGuardsIntact(long dstBase, long size) {
        byte[] lo = EnginePair.read(dstBase, GUARD);
        byte[] hi = EnginePair.read(dstBase + GUARD + size, GUARD);
        for (int i = 0; i < GUARD; i++) {
            assertThat(lo[i]).as("guard byte before destination, offset %d", i).isEqualTo(POISON);
            assertThat(hi[i]).as("guard byte after destination, offset %d", i).isEqualTo(POISON);
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 4095, 4096, CHUNK - 1, CHUNK, CHUNK + 1, 4L * 1024 * 1024 + 1})
    void writeMovesEveryByteToTheRightPlace(long size) {
        roundTrip(true, size);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 4095, 4096, CHUNK - 1, CHUNK, CHUNK + 1, 4L * 1024 * 1024 + 1})
    void readMovesEveryByteToTheRightPlace(long size) {
        roundTrip(false, size);
    }

    @Test
    void severalDescriptorsLandEachInItsOwnPlace() {
        int n = 7;
        long[] sizes = {1, 4096, CHUNK + 3, 0, 12345, 2L * CHUNK, 7};
        long total = 0;
        for (long s : sizes) {
            total += s;
        }
        long src = pair.randomBuffer(total);
        long dst = pair.poisoned(total + GUARD * (n + 1L), POISON);
        pair.a.register(dram(src, total));
        pair.share(pair.b, dram(dst, total + GUARD * (n + 1L)));
        List<MemoryDescriptor> local = new ArrayList<>();
        List<MemoryDescriptor> remote = new ArrayList<>();
        long so = 0;
        long doff = GUARD;
        // destinations in reverse order with gaps, so a misplaced chunk shows up
        long[] dstOffsets = new long[n];
        for (int i = n - 1; i >= 0; i--) {
            dstOffsets[i] = doff;
            doff += sizes[i] + GUARD;
        }
        for (int i = 0; i < n; i++) {
            local.add(dram(src + so, sizes[i]));
            remote.add(dram(dst + dstOffsets[i], sizes[i]));
            so += sizes[i];
        }
        Transfer t = pair.a.session("beta").write(local, remote, null);
        assertThat(pair.pump(() -> t.status().isTerminal())).isTrue();
        assertThat(t.status()).isEqualTo(TransferStatus.DONE);
        so = 0;
        for (int i = 0; i < n; i++) {
            assertThat(EnginePair.read(dst + dstOffsets[i], sizes[i])).as("descriptor %d", i)
                    .isEqualTo(EnginePair.read(src + so, sizes[i]));
            so += sizes[i];
        }
        // every gap still poisoned
        byte[] all = EnginePair.read(dst, total + GUARD * (n + 1L));
        long covered = 0;
        for (int i = 0; i < n; i++) {
            covered += sizes[i];
        }
        long poisoned = 0;
        for (byte x : all) {
            if (x == POISON) {
                poisoned++;
            }
        }
        assertThat(poisoned).isGreaterThanOrEqualTo(GUARD * (n + 1L));
        assertThat(all.length - covered).isEqualTo(GUARD * (n + 1L));
    }

    @Test
    void concurrentWritesAndReadsInBothDirectionsDoNotInterleaveWrongly() {
        int perSide = 6;
        long size = 3L * CHUNK + 777;
        List<Transfer> transfers = new ArrayList<>();
        List<long[]> checks = new ArrayList<>();
        Engine[] engines = {pair.a, pair.b};
        for (int side = 0; side < 2; side++) {
            Engine me = engines[side];
            Engine other = engines[1 - side];
            for (int i = 0; i < perSide; i++) {
                long mine = pair.randomBuffer(size);
                long theirs = i % 2 == 0 ? pair.poisoned(size, POISON) : pair.randomBuffer(size);
                me.register(dram(mine, size));
                RegisteredMemory r = other.register(dram(theirs, size));
                me.loadRemoteMetadata(other.name(), r.publicMetadata());
                boolean write = i % 2 == 0;
                Transfer t = write
                        ? me.session(other.name()).write(List.of(dram(mine, size)), List.of(dram(theirs, size)), null)
                        : me.session(other.name()).read(List.of(dram(mine, size)), List.of(dram(theirs, size)), null);
                transfers.add(t);
                // after a WRITE theirs == mine's original; after a READ mine == theirs
                checks.add(write ? new long[] {theirs, mine} : new long[] {mine, theirs});
            }
        }
        // capture expected content now (sources are not modified by the transfers)
        List<byte[]> expected = new ArrayList<>();
        for (long[] c : checks) {
            expected.add(EnginePair.read(c[1], size));
        }
        assertThat(pair.pump(() -> transfers.stream().allMatch(t -> t.status().isTerminal()))).isTrue();
        for (int i = 0; i < transfers.size(); i++) {
            assertThat(transfers.get(i).status()).as("transfer %d", i).isEqualTo(TransferStatus.DONE);
            assertThat(EnginePair.read(checks.get(i)[0], size)).as("transfer %d data", i).isEqualTo(expected.get(i));
        }
    }

    @Test
    void theTargetRefusesRangesOutsideItsRegisteredMemoryAndStaysByteIdentical() {
        long size = 2L * CHUNK;
        long src = pair.randomBuffer(size);
        long target = pair.poisoned(3 * size, POISON);
        pair.a.register(dram(src, size));
        // beta registers only the middle third
        pair.b.register(dram(target + size, size));
        // alpha is lied to: it believes beta published all three thirds, so its own check passes
        pair.a.loadRemoteMetadata("beta", new io.tcpx4j.domain.protocol.RegionMetadata("beta",
                dram(target, 3 * size)).encode());
        byte[] before = EnginePair.read(target, 3 * size);
        Transfer w = pair.a.session("beta").write(List.of(dram(src, size)), List.of(dram(target + size + 1, size)), "x".getBytes());
        assertThat(pair.pump(() -> w.status().isTerminal())).isTrue();
        assertThat(w.status()).isEqualTo(TransferStatus.FAILED);
        assertThat(w.error()).get().extracting(TransferException::code).isEqualTo(TransferException.Code.NOT_ALLOWED);
        assertThat(EnginePair.read(target, 3 * size)).isEqualTo(before);
        // a READ of memory outside the region must not leak a byte either
        long dst = pair.poisoned(size, POISON);
        pair.a.register(dram(dst, size));
        Transfer r = pair.a.session("beta").read(List.of(dram(dst, size)), List.of(dram(target, size)), null);
        assertThat(pair.pump(() -> r.status().isTerminal())).isTrue();
        assertThat(r.error()).get().extracting(TransferException::code).isEqualTo(TransferException.Code.NOT_ALLOWED);
        // one assertion over the buffer: a million of them would stall the pumping thread past the peer timeout
        assertThat(EnginePair.read(dst, size)).containsOnly(POISON);
        assertThat(pair.b.drainNotifications()).as("no notification for a refused WRITE").isEmpty();
        // the stream stayed in step: a valid WRITE after the refused one still lands
        Transfer ok = pair.a.session("beta").write(List.of(dram(src, size)), List.of(dram(target + size, size)), null);
        assertThat(pair.pump(() -> ok.status().isTerminal())).isTrue();
        assertThat(ok.status()).isEqualTo(TransferStatus.DONE);
        assertThat(EnginePair.read(target + size, size)).isEqualTo(EnginePair.read(src, size));
    }

    @Test
    void theInitiatorRejectsUnpublishedRemoteAndUnregisteredLocalRangesAtOnce() {
        long buf = pair.randomBuffer(8192);
        long remote = pair.alloc(8192);
        pair.share(pair.b, dram(remote, 4096));
        assertThatThrownBy(() -> pair.a.session("beta").write(List.of(dram(buf, 4096)), List.of(dram(remote, 4096)), null))
                .isInstanceOf(TransferException.class).extracting(e -> ((TransferException) e).code())
                .isEqualTo(TransferException.Code.NOT_FOUND);
        pair.a.register(dram(buf, 8192));
        assertThatThrownBy(() -> pair.a.session("beta").write(List.of(dram(buf, 8192)), List.of(dram(remote, 8192)), null))
                .isInstanceOf(TransferException.class).extracting(e -> ((TransferException) e).code())
                .isEqualTo(TransferException.Code.NOT_FOUND);
        assertThatThrownBy(() -> pair.a.session("beta").write(List.of(dram(buf, 4096)), List.of(dram(remote, 4095)), null))
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.MISMATCH);
        assertThatThrownBy(() -> pair.a.session("nobody"))
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.NOT_FOUND);
    }

    @Test
    void aBrokenConnectionFailsEveryTransferWithRemoteDisconnect() {
        long size = 64L * CHUNK;
        long src = pair.randomBuffer(size);
        long dst = pair.alloc(size);
        pair.a.register(dram(src, size));
        pair.share(pair.b, dram(dst, size));
        Transfer warm = pair.a.session("beta").write(List.of(dram(src, 1)), List.of(dram(dst, 1)), null);
        assertThat(pair.pump(() -> warm.status().isTerminal())).isTrue();
        List<Transfer> inflight = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            inflight.add(pair.a.session("beta").write(List.of(dram(src, size)), List.of(dram(dst, size)), null));
        }
        pair.pumpRounds(1);
        assertThat(inflight).allMatch(t -> !t.status().isTerminal());
        pair.fabric.breakAll();
        assertThat(pair.pump(() -> inflight.stream().allMatch(t -> t.status().isTerminal()))).isTrue();
        for (Transfer t : inflight) {
            assertThat(t.status()).isEqualTo(TransferStatus.FAILED);
            assertThat(t.error()).get().extracting(TransferException::code).isEqualTo(TransferException.Code.REMOTE_DISCONNECT);
        }
        assertThat(pair.a.stats().outstandingRequests()).isZero();
        assertThat(pair.a.stats().liveOperations()).isZero();
    }

    @Test
    void aSessionToItselfCopiesLocallyAndStillNotifies() {
        long src = pair.randomBuffer(10_000);
        long dst = pair.poisoned(10_000, POISON);
        pair.a.register(dram(src, 10_000));
        pair.a.register(dram(dst, 10_000));
        Transfer t = pair.a.session("alpha").write(List.of(dram(src, 10_000)), List.of(dram(dst, 10_000)), "me".getBytes());
        assertThat(t.status()).isEqualTo(TransferStatus.DONE);
        assertThat(EnginePair.read(dst, 10_000)).isEqualTo(EnginePair.read(src, 10_000));
        assertThat(pair.a.drainNotifications()).containsExactly(new Notification("alpha", "me".getBytes()));
    }

    @Test
    void standaloneNotificationsArriveInOrderExactlyOnce() {
        for (int i = 0; i < 5; i++) {
            pair.a.session("beta").notify(("n" + i).getBytes());
        }
        List<Notification> got = new ArrayList<>();
        assertThat(pair.pump(() -> {
            got.addAll(pair.b.drainNotifications());
            return got.size() >= 5;
        })).isTrue();
        pair.pumpRounds(100);
        got.addAll(pair.b.drainNotifications());
        assertThat(got).extracting(n -> new String(n.message())).containsExactly("n0", "n1", "n2", "n3", "n4");
    }

    @Test
    void aWrongSecretIsRefusedBeforeAnyDataMoves() {
        long src = pair.randomBuffer(4096);
        long dst = pair.poisoned(4096, POISON);
        pair.a.register(dram(src, 4096));
        pair.share(pair.b, dram(dst, 4096));
        io.tcpx4j.domain.protocol.ConnInfo real = io.tcpx4j.domain.protocol.ConnInfo.decode(pair.b.connInfo());
        byte[] wrong = real.secret();
        wrong[0] ^= 1;
        pair.a.loadPeer("beta", new io.tcpx4j.domain.protocol.ConnInfo("beta", real.host(), real.port(), wrong).encode());
        Transfer t = pair.a.session("beta").write(List.of(dram(src, 4096)), List.of(dram(dst, 4096)), null);
        assertThat(pair.pump(() -> t.status().isTerminal())).isTrue();
        assertThat(t.error()).get().extracting(TransferException::code).isEqualTo(TransferException.Code.NOT_ALLOWED);
        for (byte x : EnginePair.read(dst, 4096)) {
            assertThat(x).isEqualTo(POISON);
        }
    }
}
