package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.CountingTransportDouble;
import io.tcpx4j.domain.EnginePair;
import io.tcpx4j.domain.protocol.RegionMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A transfer that would load one channel more than another travels in equal chunks, a whole number per
 * channel ({@link ChunkPlan#spreadChunk}), WRITE and READ alike, announced by the data sender, every byte
 * in place; one queued behind others of the same connection keeps the configured chunk.
 */
class SpreadTransferTest {

    private static final int KIB = 1024;

    private EnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private List<Integer> sends() {
        List<Integer> all = new ArrayList<>(((CountingTransportDouble) pair.ta).sendSizes);
        all.addAll(((CountingTransportDouble) pair.tb).sendSizes);
        return all;
    }

    @ParameterizedTest(name = "write {0}")
    @ValueSource(booleans = {true, false})
    void aLoneDescriptorGoesOutOnBothChannelsSideBySide(boolean write) {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(0),
                EngineConfig.defaults("beta").withInlineLimit(0), CountingTransportDouble::new);
        pair.transferAndCheck(write, new long[] {256 * KIB});
        assertThat(sends()).containsExactly(128 * KIB, 128 * KIB);
        pair.transferAndCheck(write, new long[] {600 * KIB});
        assertThat(sends()).containsExactly(128 * KIB, 128 * KIB, 300 * KIB, 300 * KIB);
        pair.transferAndCheck(write, new long[] {1536 * KIB});
        assertThat(sends()).as("two rounds over two channels").endsWith(384 * KIB, 384 * KIB, 384 * KIB, 384 * KIB)
                .hasSize(8);
        pair.transferAndCheck(write, new long[] {128 * KIB});
        assertThat(sends()).as("at the floor: one chunk").hasSize(9).endsWith(128 * KIB);
        pair.transferAndCheck(write, new long[] {2560 * KIB});
        assertThat(sends()).as("five chunks of 512 KiB become three of 428 KiB per channel").hasSize(15)
                .endsWith(428 * KIB, 428 * KIB, 428 * KIB, 428 * KIB, 428 * KIB, 420 * KIB);
    }

    @Test
    void aTransferQueuedBehindAnotherKeepsTheConfiguredChunk() {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(0),
                EngineConfig.defaults("beta").withInlineLimit(0), CountingTransportDouble::new);
        long size = 256 * KIB;
        long src = pair.randomBuffer(2 * size);
        long dst = pair.alloc(2 * size);
        pair.a.register(new MemoryDescriptor(src, 2 * size, MemoryKind.DRAM, 0));
        MemoryDescriptor dstRange = new MemoryDescriptor(dst, 2 * size, MemoryKind.DRAM, 0);
        pair.b.register(dstRange);
        pair.a.loadRemoteMetadata("beta", new RegionMetadata("beta", dstRange).encode());
        List<Transfer> both = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            both.add(pair.a.session("beta").write(List.of(new MemoryDescriptor(src + i * size, size, MemoryKind.DRAM, 0)),
                    List.of(new MemoryDescriptor(dst + i * size, size, MemoryKind.DRAM, 0)), null));
        }
        assertThat(pair.pump(() -> both.stream().allMatch(t -> t.status().isTerminal()))).isTrue();
        assertThat(both).allMatch(t -> t.status() == TransferStatus.DONE);
        assertThat(EnginePair.read(dst, 2 * size)).isEqualTo(EnginePair.read(src, 2 * size));
        assertThat(sends()).as("the first spread over both channels, the second behind it whole")
                .containsExactlyInAnyOrder(128 * KIB, 128 * KIB, 256 * KIB);
    }

    @ParameterizedTest(name = "write {0}")
    @ValueSource(booleans = {true, false})
    void oneChannelOrDescriptorsThatWouldSplitFurtherKeepTheConfiguredChunk(boolean write) {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(0).withChannels(1),
                EngineConfig.defaults("beta").withInlineLimit(0).withChannels(1), CountingTransportDouble::new);
        pair.transferAndCheck(write, new long[] {256 * KIB});
        assertThat(sends()).containsExactly(256 * KIB);
        close();
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(0),
                EngineConfig.defaults("beta").withInlineLimit(0), CountingTransportDouble::new);
        pair.transferAndCheck(write, new long[] {256 * KIB, 256 * KIB, 256 * KIB});
        assertThat(sends()).containsExactly(256 * KIB, 256 * KIB, 256 * KIB);
    }
}
