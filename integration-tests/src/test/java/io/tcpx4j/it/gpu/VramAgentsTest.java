package io.tcpx4j.it.gpu;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.cuda.CudaDeviceMemory;
import io.tcpx4j.cuda.GpuTest;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.protocol.ConnInfo;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A target engine of two progress agents on one GPU, two initiators that each reach a different agent,
 * WRITEs and READs of KV-shaped batches in VRAM at the same time: each agent scatters its receives with
 * an unpacker of its own (made by {@code CudaScatterGather.another()}), and every descriptor is compared.
 */
@GpuTest
class VramAgentsTest {

    private static final int BLOCK = 16 * 1024;
    private static final int BLOCKS = 256;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Test
    void twoAgentsEachScatterTheirInitiatorsDescriptorsIntoVram() throws InterruptedException {
        try (CudaDeviceMemory memory = new CudaDeviceMemory();
             GpuNode target = new GpuNode("agents-t", memory, 0, 2, 2, 2, EngineConfig.DEFAULT_CHUNK, 2);
             GpuNode a = new GpuNode("agents-a", memory, 0, 2, 2, 2);
             GpuNode b = new GpuNode("agents-b", memory, 0, 2, 2, 2)) {
            List<GpuNode> initiators = List.of(a, b);
            assertThat(ConnInfo.agentFor("agents-a", 2)).isNotEqualTo(ConnInfo.agentFor("agents-b", 2));
            long total = (long) BLOCK * BLOCKS;
            MemoryDescriptor landing = target.allocate(2 * total);
            MemoryDescriptor outgoing = target.allocate(2 * total);
            target.poison(landing, (byte) 0x5A);
            target.fillRandom(outgoing, 99);
            RegisteredMemory landingReg = target.engine.register(landing);
            RegisteredMemory outgoingReg = target.engine.register(outgoing);
            List<MemoryDescriptor> sources = new ArrayList<>();
            List<MemoryDescriptor> readBack = new ArrayList<>();
            List<Transfer> transfers = new ArrayList<>();
            for (int n = 0; n < 2; n++) {
                GpuNode i = initiators.get(n);
                i.engine.loadPeer("agents-t", target.engine.connInfo());
                i.engine.loadRemoteMetadata("agents-t", landingReg.publicMetadata());
                i.engine.loadRemoteMetadata("agents-t", outgoingReg.publicMetadata());
                MemoryDescriptor src = i.allocate(total);
                MemoryDescriptor dst = i.allocate(total);
                i.fillRandom(src, 7 + n);
                i.poison(dst, (byte) 0x3C);
                i.engine.register(src);
                i.engine.register(dst);
                sources.add(src);
                readBack.add(dst);
                // reversed on the target: nothing merges, every chunk is packed and scattered by the kernel
                List<MemoryDescriptor> from = new ArrayList<>();
                List<MemoryDescriptor> to = new ArrayList<>();
                List<MemoryDescriptor> back = new ArrayList<>();
                List<MemoryDescriptor> remoteOut = new ArrayList<>();
                for (int k = 0; k < BLOCKS; k++) {
                    from.add(src.slice((long) k * BLOCK, BLOCK));
                    to.add(landing.slice(n * total + (long) (BLOCKS - 1 - k) * BLOCK, BLOCK));
                    back.add(dst.slice((long) k * BLOCK, BLOCK));
                    remoteOut.add(outgoing.slice(n * total + (long) (BLOCKS - 1 - k) * BLOCK, BLOCK));
                }
                transfers.add(i.engine.session("agents-t").write(from, to, null));
                transfers.add(i.engine.session("agents-t").read(back, remoteOut, null));
            }
            for (Transfer t : transfers) {
                assertThat(t.await(TIMEOUT)).as("transfer %s", t.error()).isEqualTo(TransferStatus.DONE);
            }
            for (int n = 0; n < 2; n++) {
                for (int k = 0; k < BLOCKS; k++) {
                    MemoryDescriptor landed = landing.slice(n * total + (long) (BLOCKS - 1 - k) * BLOCK, BLOCK);
                    assertThat(target.mismatch(landed, sources.get(n).slice((long) k * BLOCK, BLOCK)))
                            .as("initiator %d block %d in the target", n, k).isEqualTo(-1);
                    MemoryDescriptor read = readBack.get(n).slice((long) k * BLOCK, BLOCK);
                    assertThat(target.mismatch(read, outgoing.slice(n * total + (long) (BLOCKS - 1 - k) * BLOCK, BLOCK)))
                            .as("initiator %d block %d read back", n, k).isEqualTo(-1);
                }
            }
        }
    }
}
