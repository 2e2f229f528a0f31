package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.protocol.RegionMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transfers small enough to travel inside their control frames: they never touch the transport, land
 * every byte in its place, notify after the last byte, and are bounds checked like chunked ones; a
 * limit of 0 (or a target whose own limit is lower, announced when connecting) sends them through the
 * data channels instead.
 */
class InlineTransferTest {

    private static final byte POISON = (byte) 0x5A;
    private static final int GUARD = 4096;
    private static final int LIMIT = 64 * 1024;

    private EnginePair pair;

    private EnginePair pair(int limitA, int limitB) {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(limitA),
                EngineConfig.defaults("beta").withInlineLimit(limitB), CountingTransportDouble::new);
        return pair;
    }

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private int requests() {
        return CountingTransportDouble.total(pair);
    }

    private void transfer(boolean write, long[] sizes) {
        pair.transferAndCheck(write, sizes);
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
    void aTargetWhoseLimitIsLowerTakesInlineWritesOnlyUpToItsLimit() {
        pair(LIMIT, 4096);
        transfer(true, new long[] {4096});
        assertThat(requests()).as("within beta's limit: inline").isZero();
        transfer(true, new long[] {4097});
        assertThat(requests()).as("above beta's limit, within alpha's: through the data channels").isPositive();
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
