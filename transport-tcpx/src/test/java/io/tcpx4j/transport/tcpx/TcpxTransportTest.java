package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** TcpxTransport over the C test peer (ncclNet v5..v8 builds), in this JVM. */
class TcpxTransportTest {

    private static final int MIB = 1 << 20;
    private final List<Long> allocations = new ArrayList<>();
    private TcpxTransport transport;

    @AfterEach
    void tearDown() {
        if (transport != null) {
            transport.close();
        }
        allocations.forEach(NativeMemory::free);
    }

    private long alloc(long size) {
        long a = NativeMemory.allocate(Math.max(size, 1), NativeMemory.PAGE);
        allocations.add(a);
        return a;
    }

    private static void fill(long address, int size, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) r.nextInt();
        }
        NativeMemory.put(address, b, 0, size);
    }

    private static void assertBytes(long address, int size, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        byte[] b = new byte[size];
        NativeMemory.get(address, b, 0, size);
        for (int i = 0; i < size; i++) {
            byte want = (byte) r.nextInt();
            if (b[i] != want) {
                throw new AssertionError("byte " + i + " of " + size + ": " + b[i] + " != " + want);
            }
        }
    }

    /** What any v7 plugin's transport says of itself: its plugin's name, its devices, their capabilities. */
    @Test
    void describesTheV7PluginAndItsDevices() {
        transport = TestPeers.transport("v7");
        assertThat(transport.name()).isEqualTo("tcpx");
        assertThat(transport.pluginName()).isNotBlank();
        assertThat(transport.pluginDescription()).contains(transport.pluginName(), "ncclNet v7",
                TestPeers.path("v7"));
        assertThat(transport.deviceCount()).isPositive();
        for (int d = 0; d < transport.deviceCount(); d++) {
            DeviceProperties p = transport.properties(d);
            assertThat(p.name()).isNotBlank();
            assertThat(p.pciPath()).as("a sysfs path, or none").satisfiesAnyOf(x -> assertThat(x).isEmpty(),
                    x -> assertThat(x).startsWith("/"));
            assertThat(p.ptrSupport()).contains(PtrType.HOST);
            assertThat(p.maxRecvs()).isPositive();
            assertThat(transport.capabilities(d)).isEqualTo(DeviceCapabilities.of(p))
                    .containsAll(transport.capabilities());
        }
        int n = transport.deviceCount();
        assertThatThrownBy(() -> transport.properties(n)).isInstanceOf(TransferException.class)
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        assertThatThrownBy(() -> transport.capabilities(n)).isInstanceOf(TransferException.class)
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
    }

    @Test
    void propertiesOfTheV7Peer() {
        TestPeers.requireTestPeer("v7 build's device properties");
        transport = TestPeers.transport("v7");
        assertThat(transport.deviceCount()).isEqualTo(1);
        DeviceProperties p = transport.properties(0);
        assertThat(p.name()).isEqualTo("lo");
        assertThat(p.pciPath()).startsWith("/sys/devices/");
        assertThat(p.guid()).isEqualTo(0x7e57);
        assertThat(p.ptrSupport()).containsExactlyInAnyOrder(PtrType.HOST, PtrType.CUDA);
        assertThat(p.speedMbps()).isEqualTo(100000);
        assertThat(p.port()).isEqualTo(1);
        assertThat(p.latencyUs()).isEqualTo(2.5f);
        assertThat(p.maxComms()).isEqualTo(65536);
        assertThat(p.maxRecvs()).isEqualTo(1);
        assertThat(p.netDeviceType()).isEqualTo(DeviceProperties.NET_DEVICE_UNPACK);
        assertThat(p.netDeviceVersion()).isEqualTo(7);
        assertThat(transport.capabilities()).containsExactlyInAnyOrder(Capability.CUDA_MEMORY, Capability.DEVMEM_RECEIVE);
    }

    @Test
    void propertiesOfOlderVersionsHaveNoDeviceType() {
        transport = TestPeers.transport("v6");
        assertThat(transport.properties(0).netDeviceType()).isZero();
        assertThat(transport.properties(0).maxRecvs()).isEqualTo(1);
        assertThat(transport.properties(0).latencyUs()).isEqualTo(2.5f);
        assertThat(transport.capabilities()).containsExactly(Capability.CUDA_MEMORY);
        transport.close();
        transport = TestPeers.transport("v8");
        assertThat(transport.properties(0).netDeviceType()).isEqualTo(1);
        assertThat(transport.properties(0).speedMbps()).isEqualTo(100000);
        assertThat(transport.properties(0).maxRecvs()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"v5", "v6", "v7", "v8"})
    void hostRoundTripOfEverySizeWithEveryByteChecked(String version) {
        transport = TestPeers.transport(version);
        TestPeers.Pair pair = TestPeers.Pair.connect(transport);
        int max = 4 * MIB;
        long src = alloc(max);
        long dst = alloc(max);
        MemoryRegistration sm = transport.register(pair.send(), src, max, PtrType.HOST);
        MemoryRegistration rm = transport.register(pair.recv(), dst, max, PtrType.HOST);
        int[] sizes = {0, 1, 7, 4095, 4096, 4097, 65_537, MIB, 4 * MIB};
        for (int size : sizes) {
            fill(src, size, size);
            NativeMemory.fill(dst, max, (byte) 0);
            NetRequest r = null;
            NetRequest s = null;
            while (r == null) {
                r = transport.irecv(pair.recv(), dst, size, 1, rm);
            }
            while (s == null) {
                s = transport.isend(pair.send(), src, size, 1, sm);
            }
            TestPeers.pump(transport, s, r);
            assertThat(r.size()).as("the posted size, never the plugin's size output").isEqualTo(size);
            assertThat(s.size()).isEqualTo(size);
            assertThat(r.fragmentCount()).as("host receives land in place").isZero();
            assertBytes(dst, size, size);
            transport.consumed(pair.recv(), r);
        }
    }

    @Test
    void devmemReceiveLandsInBouncePagesAndUnpacksToTheSameBytes() {
        TestPeers.requireTestPeer("host memory registered as NCCL_PTR_CUDA (a real plugin needs GPU memory)");
        transport = TestPeers.transport("v7");
        TestPeers.Pair pair = TestPeers.Pair.connect(transport);
        int max = 4 * MIB;
        long src = alloc(max);
        long dst = alloc(max);
        MemoryRegistration sm = transport.register(pair.send(), src, max, PtrType.HOST);
        // "CUDA" memory to the test peer is host memory, registered as NCCL_PTR_CUDA (4 KiB aligned).
        MemoryRegistration rm = transport.register(pair.recv(), dst, max, PtrType.CUDA);
        assertThat(transport.bounceKindOf(pair.recv())).isEqualTo(MemoryKind.DRAM);
        for (int size : new int[] {0, 1, 3584, 4096, 100_000, MIB + 13, 4 * MIB}) {
            fill(src, size, 31L * size);
            NativeMemory.fill(dst, max, (byte) 0x5a);
            NetRequest r = transport.irecv(pair.recv(), dst, size, 0, rm);
            NetRequest s = transport.isend(pair.send(), src, size, 0, sm);
            assertThat(r).isNotNull();
            assertThat(s).isNotNull();
            TestPeers.pump(transport, s, r);
            assertThat(r.size()).isEqualTo(size);
            if (size == 0) {
                assertThat(r.fragmentCount()).isZero();
            } else {
                // at least one fragment per 4 KiB page; the peer starts every other fragment mid-page
                assertThat(r.fragmentCount()).isBetween((size + 4095) / 4096, NetRequest.MAX_FRAGMENTS);
                assertThat(r.bounceKind()).isEqualTo(MemoryKind.DRAM);
                assertThat(r.bounceBase()).isNotZero();
                assertThat(NativeMemory.getByte(dst)).as("nothing landed in place before unpacking").isEqualTo((byte) 0x5a);
                CpuScatterGather.unpack(r, dst);
            }
            assertBytes(dst, size, 31L * size);
            transport.consumed(pair.recv(), r);
        }
    }

    @Test
    void v6CudaReceivesLandInPlaceWithoutDeviceHandles() {
        transport = TestPeers.transport("v6");
        TestPeers.Pair pair = TestPeers.Pair.connect(transport);
        long src = alloc(MIB);
        long dst = alloc(MIB);
        MemoryRegistration sm = transport.register(pair.send(), src, MIB, PtrType.HOST);
        MemoryRegistration rm = transport.register(pair.recv(), dst, MIB, PtrType.CUDA);
        fill(src, MIB, 6);
        NetRequest r = transport.irecv(pair.recv(), dst, MIB, 0, rm);
        NetRequest s = transport.isend(pair.send(), src, MIB, 0, sm);
        TestPeers.pump(transport, s, r);
        assertThat(r.fragmentCount()).isZero();
        assertBytes(dst, MIB, 6);
        transport.consumed(pair.recv(), r);
    }

    /**
     * v5/v6 peers free a receive's slot when it tests done (no irecvConsumed); the adapter still holds
     * it until consumed, the SPI rule for every layout.
     */
    @ParameterizedTest
    @ValueSource(strings = {"v5", "v6", "v7", "v8"})
    void seventeenthRequestOnACommIsBusy(String version) {
        transport = TestPeers.transport(version);
        TestPeers.Pair pair = TestPeers.Pair.connect(transport);
        long dst = alloc(64 * 1024);
        long src = alloc(64 * 1024);
        MemoryRegistration rm = transport.register(pair.recv(), dst, 64 * 1024, PtrType.HOST);
        MemoryRegistration sm = transport.register(pair.send(), src, 64 * 1024, PtrType.HOST);
        List<NetRequest> recvs = new ArrayList<>();
        for (int i = 0; i < NetTransport.MAX_REQUESTS; i++) {
            NetRequest r = transport.irecv(pair.recv(), dst + i * 4096L, 4096, i, rm);
            assertThat(r).as("receive " + i).isNotNull();
            recvs.add(r);
        }
        assertThat(transport.irecv(pair.recv(), dst, 4096, 16, rm)).as("17th receive").isNull();
        // complete all 16; they still hold their slots until consumed
        for (int i = 0; i < NetTransport.MAX_REQUESTS; i++) {
            NetRequest s = transport.isend(pair.send(), src, 4096, i, sm);
            TestPeers.pump(transport, s, recvs.get(i));
        }
        assertThat(transport.irecv(pair.recv(), dst, 4096, 16, rm)).as("completed but unconsumed").isNull();
        transport.consumed(pair.recv(), recvs.get(0));
        NetRequest again = transport.irecv(pair.recv(), dst, 4096, 16, rm);
        assertThat(again).as("one slot back after consume").isNotNull();
        assertThat(transport.irecv(pair.recv(), dst, 4096, 17, rm)).as("and only one").isNull();
        for (int i = 1; i < NetTransport.MAX_REQUESTS; i++) {
            transport.consumed(pair.recv(), recvs.get(i));
        }
        fill(src, 4096, 17);
        TestPeers.pump(transport, transport.isend(pair.send(), src, 4096, 16, sm), again);
        assertBytes(dst, 4096, 17);
        transport.consumed(pair.recv(), again);
    }

    @Test
    void testAndConsumeAreFifoOnly() {
        transport = TestPeers.transport("v7");
        TestPeers.Pair pair = TestPeers.Pair.connect(transport);
        long dst = alloc(8192);
        long src = alloc(8192);
        MemoryRegistration rm = transport.register(pair.recv(), dst, 8192, PtrType.HOST);
        MemoryRegistration sm = transport.register(pair.send(), src, 8192, PtrType.HOST);
        NetRequest r1 = transport.irecv(pair.recv(), dst, 4096, 0, rm);
        NetRequest r2 = transport.irecv(pair.recv(), dst + 4096, 4096, 0, rm);
        assertThatThrownBy(() -> transport.test(r2)).isInstanceOf(TransferException.class)
                .hasMessageContaining("oldest")
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        NetRequest s1 = transport.isend(pair.send(), src, 4096, 0, sm);
        NetRequest s2 = transport.isend(pair.send(), src, 4096, 0, sm);
        TestPeers.pump(transport, s1, s2, r1, r2);
        assertThatThrownBy(() -> transport.consumed(pair.recv(), r2)).isInstanceOf(TransferException.class)
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        assertThatThrownBy(() -> transport.test(r1)).as("already completed").isInstanceOf(TransferException.class);
        transport.consumed(pair.recv(), r1);
        transport.consumed(pair.recv(), r2);
    }

    @Test
    void registrationRules() {
        TestPeers.requireTestPeer("host memory registered as NCCL_PTR_CUDA (a real plugin needs GPU memory)");
        transport = TestPeers.transport("v7");
        TestPeers.Pair pair = TestPeers.Pair.connect(transport);
        long buf = alloc(3 * 4096);
        assertThatThrownBy(() -> transport.register(pair.recv(), buf + 64, 4096, PtrType.CUDA))
                .isInstanceOf(TransferException.class).hasMessageContaining("4 KiB")
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        assertThatThrownBy(() -> transport.register(pair.recv(), buf, 4000, PtrType.CUDA))
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        assertThatThrownBy(() -> transport.register(pair.recv(), buf, 4096, PtrType.DMABUF))
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.NOT_SUPPORTED);
        MemoryRegistration onSend = transport.register(pair.send(), buf, 4096, PtrType.HOST);
        assertThatThrownBy(() -> transport.irecv(pair.recv(), buf, 4096, 0, onSend))
                .as("registrations are per comm").hasMessageContaining("per comm")
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        MemoryRegistration onRecv = transport.register(pair.recv(), buf, 4096, PtrType.HOST);
        assertThatThrownBy(() -> transport.irecv(pair.recv(), buf + 4096, 1, 0, onRecv))
                .hasMessageContaining("outside");
        transport.deregister(pair.recv(), onRecv);
        assertThatThrownBy(() -> transport.irecv(pair.recv(), buf, 1, 0, onRecv)).hasMessageContaining("deregistered");
    }

    @Test
    void peerClosingMidTransferIsRemoteDisconnect() {
        transport = TestPeers.transport("v7");
        TestPeers.Pair pair = TestPeers.Pair.connect(transport);
        long dst = alloc(MIB);
        long src = alloc(MIB);
        MemoryRegistration rm = transport.register(pair.recv(), dst, MIB, PtrType.HOST);
        MemoryRegistration sm = transport.register(pair.send(), src, MIB, PtrType.HOST);
        NetRequest s = transport.isend(pair.send(), src, 4096, 0, sm);
        NetRequest r = transport.irecv(pair.recv(), dst, 4096, 0, rm);
        TestPeers.pump(transport, s, r);
        transport.consumed(pair.recv(), r);
        NetRequest lost = transport.irecv(pair.recv(), dst, MIB, 0, rm);
        transport.closeSend(pair.send());
        assertThatThrownBy(() -> {
            for (int i = 0; i < 1_000_000; i++) {
                transport.test(lost);
            }
        }).isInstanceOf(TransferException.class).satisfies(e -> assertThat(((TransferException) e).code())
                .isIn(TransferException.Code.REMOTE_DISCONNECT));
        // The plugin answers ncclInternalError to a post on the broken comm (TCPX would even hand out
        // requests that never complete); with requests outstanding that must not read as BUSY.
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> transport.irecv(pair.recv(), dst, 4096, 0, rm)).as("posting on a failed comm")
                    .isInstanceOfSatisfying(TransferException.class,
                            e -> assertThat(e.code()).isEqualTo(TransferException.Code.REMOTE_DISCONNECT));
        }
        assertThatThrownBy(() -> transport.test(lost)).as("testing the failed request again")
                .isInstanceOfSatisfying(TransferException.class,
                        e -> assertThat(e.code()).isEqualTo(TransferException.Code.REMOTE_DISCONNECT));
    }

    @Test
    void closedTransportRefusesWork() {
        transport = TestPeers.transport("v7");
        TestPeers.Pair pair = TestPeers.Pair.connect(transport);
        transport.close();
        transport.close(); // idempotent
        assertThatThrownBy(() -> transport.listen(0)).isInstanceOf(TransferException.class);
        assertThatThrownBy(() -> transport.register(pair.recv(), 4096, 4096, PtrType.HOST))
                .hasMessageContaining("closed");
    }
}
