package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.protocol.RegionMetadata;
import io.tcpx4j.domain.testing.ForwardingNetTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transfers small enough to travel inside their control frames: they never touch the transport, land
 * every byte in its place, notify after the last byte, and are bounds checked like chunked ones; a
 * limit of 0 (or a target that will not answer inline) sends them through the data channels instead.
 */
class InlineTransferTest {

    private static final byte POISON = (byte) 0x5A;
    private static final int GUARD = 4096;
    private static final int LIMIT = 64 * 1024;

    /** Counts the data requests an engine puts on its transport. */
    static final class CountingTransport extends ForwardingNetTransport {
        final AtomicInteger requests = new AtomicInteger();

        CountingTransport(NetTransport d) {
            super(d);
        }

        @Override
        public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
            NetRequest r = super.isend(comm, address, size, tag, registration);
            if (r != null) {
                requests.incrementAndGet();
            }
            return r;
        }

        @Override
        public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
            NetRequest r = super.irecv(comm, address, size, tag, registration);
            if (r != null) {
                requests.incrementAndGet();
            }
            return r;
        }
    }

    private EnginePair pair;

    private EnginePair pair(int limitA, int limitB) {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(limitA),
                EngineConfig.defaults("beta").withInlineLimit(limitB), CountingTransport::new);
        return pair;
    }

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private int requests() {
        return ((CountingTransport) pair.ta).requests.get() + ((CountingTransport) pair.tb).requests.get();
    }

    /**
     * Alpha WRITEs (or READs) {@code sizes} as separate descriptors between a random buffer and a
     * poisoned one with a guard band after each destination; checks every byte, every guard and the
     * notification, which must never be seen before the data.
     */
    private void transfer(boolean write, long[] sizes) {
        long total = 0;
        for (long s : sizes) {
            total += s;
        }
        long srcBuf = pair.randomBuffer(total);
        long dstBuf = pair.poisoned(total + GUARD * (sizes.length + 1L), POISON);
        Engine srcOwner = write ? pair.a : pair.b;
        Engine dstOwner = write ? pair.b : pair.a;
        srcOwner.register(MemoryDescriptor.dram(srcBuf, total));
        dstOwner.register(MemoryDescriptor.dram(dstBuf, total + GUARD * (sizes.length + 1L)));
        pair.a.loadRemoteMetadata("beta", new RegionMetadata("beta", write
                ? MemoryDescriptor.dram(dstBuf, total + GUARD * (sizes.length + 1L))
                : MemoryDescriptor.dram(srcBuf, total)).encode());
        List<MemoryDescriptor> src = new ArrayList<>();
        List<MemoryDescriptor> dst = new ArrayList<>();
        long so = 0;
        long dOff = GUARD;
        // destinations in reverse order, so a misplaced descriptor shows
        long[] dstAt = new long[sizes.length];
        for (int i = sizes.length - 1; i >= 0; i--) {
            dstAt[i] = dstBuf + dOff;
            dOff += sizes[i] + GUARD;
        }
        for (int i = 0; i < sizes.length; i++) {
            src.add(MemoryDescriptor.dram(srcBuf + so, sizes[i]));
            dst.add(MemoryDescriptor.dram(dstAt[i], sizes[i]));
            so += sizes[i];
        }
        byte[] note = "landed".getBytes(StandardCharsets.UTF_8);
        Transfer t = write ? pair.a.session("beta").write(src, dst, note) : pair.a.session("beta").read(dst, src, note);
        List<Notification> notes = new ArrayList<>();
        Engine notified = pair.b;
        assertThat(pair.pump(() -> {
            List<Notification> got = notified.drainNotifications();
            if (!got.isEmpty()) {
                assertThat(EnginePair.read(dstAt[0], sizes[0])).as("data before the notification")
                        .isEqualTo(EnginePair.read(srcBuf, sizes[0]));
            }
            notes.addAll(got);
            return t.status().isTerminal() && !notes.isEmpty();
        })).as("transfer and notification").isTrue();
        assertThat(t.status()).isEqualTo(TransferStatus.DONE);
        so = 0;
        for (int i = 0; i < sizes.length; i++) {
            assertThat(EnginePair.read(dstAt[i], sizes[i])).as("descriptor %d", i)
                    .isEqualTo(EnginePair.read(srcBuf + so, sizes[i]));
            assertThat(EnginePair.read(dstAt[i] + sizes[i], GUARD)).as("guard after descriptor %d", i)
                    .containsOnly(POISON);
            so += sizes[i];
        }
        assertThat(EnginePair.read(dstBuf, GUARD)).as("guard before the first").containsOnly(POISON);
        pair.pumpRounds(100);
        notes.addAll(notified.drainNotifications());
        assertThat(notes).containsExactly(new Notification("alpha", note));
    }

    private static final long[] SMALL = {1, 4096, 0, 777, 12_000, 3};

    @Test
    void smallWritesAndReadsTravelInTheControlFramesAndLandEveryByte() {
        pair(LIMIT, LIMIT);
        transfer(true, SMALL);
        transfer(false, SMALL);
        transfer(true, new long[] {LIMIT});
        assertThat(requests()).as("data requests on the transport").isZero();
    }

    @Test
    void aLimitOfZeroSendsTheSameTransfersThroughTheDataChannels() {
        pair(0, 0);
        transfer(true, SMALL);
        transfer(false, SMALL);
        assertThat(requests()).as("data requests on the transport").isPositive();
    }

    @Test
    void transfersAboveTheLimitUseTheDataChannels() {
        pair(4096, 4096);
        transfer(true, new long[] {4096});
        assertThat(requests()).isZero();
        transfer(true, new long[] {4097});
        assertThat(requests()).isPositive();
    }

    @Test
    void aTargetWhoseLimitIsLowerAnswersAnInlineReadWithChunks() {
        pair(LIMIT, 0);
        transfer(false, SMALL);
        assertThat(requests()).as("beta answered through the data channels").isPositive();
        transfer(true, SMALL);
    }

    @Test
    void theTargetRefusesInlineRangesOutsideItsRegisteredMemoryAndStaysByteIdentical() {
        pair(LIMIT, LIMIT);
        long size = 4096;
        long src = pair.randomBuffer(size);
        long target = pair.poisoned(3 * size, POISON);
        pair.a.register(MemoryDescriptor.dram(src, size));
        pair.b.register(MemoryDescriptor.dram(target + size, size));
        // alpha is lied to: it believes beta published all three pages, so its own check passes
        pair.a.loadRemoteMetadata("beta", new RegionMetadata("beta", MemoryDescriptor.dram(target, 3 * size)).encode());
        byte[] before = EnginePair.read(target, 3 * size);
        Transfer w = pair.a.session("beta").write(List.of(MemoryDescriptor.dram(src, size)),
                List.of(MemoryDescriptor.dram(target + size + 1, size)), "x".getBytes());
        assertThat(pair.pump(() -> w.status().isTerminal())).isTrue();
        assertThat(w.error()).get().extracting(TransferException::code).isEqualTo(TransferException.Code.NOT_ALLOWED);
        assertThat(EnginePair.read(target, 3 * size)).isEqualTo(before);
        long dst = pair.poisoned(size, POISON);
        pair.a.register(MemoryDescriptor.dram(dst, size));
        Transfer r = pair.a.session("beta").read(List.of(MemoryDescriptor.dram(dst, size)),
                List.of(MemoryDescriptor.dram(target, size)), null);
        assertThat(pair.pump(() -> r.status().isTerminal())).isTrue();
        assertThat(r.error()).get().extracting(TransferException::code).isEqualTo(TransferException.Code.NOT_ALLOWED);
        assertThat(EnginePair.read(dst, size)).containsOnly(POISON);
        assertThat(pair.b.drainNotifications()).as("no notification for a refused WRITE").isEmpty();
        Transfer ok = pair.a.session("beta").write(List.of(MemoryDescriptor.dram(src, size)),
                List.of(MemoryDescriptor.dram(target + size, size)), null);
        assertThat(pair.pump(() -> ok.status().isTerminal())).isTrue();
        assertThat(ok.status()).isEqualTo(TransferStatus.DONE);
        assertThat(EnginePair.read(target + size, size)).isEqualTo(EnginePair.read(src, size));
        assertThat(requests()).isZero();
    }
}
