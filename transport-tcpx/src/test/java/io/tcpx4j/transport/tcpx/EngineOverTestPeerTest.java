package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Two engines in this JVM, WRITE and READ through TcpxTransport and the C test peer: v7 (TCPX's
 * table) with host memory and with pretend VRAM unpacked from bounce-page fragments on both sides, v6
 * with host memory and with pretend VRAM that receives land in place.
 */
class EngineOverTestPeerTest {

    private static final int SIZE = 3 * 1024 * 1024 + 4096; // several chunks over both channels
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<Long> allocations = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        allocations.forEach(NativeMemory::free);
    }

    private long alloc(int size) {
        long a = NativeMemory.allocate(size, NativeMemory.PAGE);
        allocations.add(a);
        return a;
    }

    private Engine engine(String name, String peer, DeviceMemory memory, ScatterGather unpacker) {
        TcpxTransport t = TcpxTransport.open(TcpxOptions.defaults().withLibrary(TestPeers.path(peer))
                .withProbeInChildProcess(false), memory);
        closeables.add(t);
        Engine e = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults(name)), t, memory, unpacker,
                Clock.SYSTEM);
        closeables.add(e);
        e.start();
        return e;
    }

    private static void fill(long address, int size, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        byte[] b = new byte[size];
        r.nextBytes(b);
        NativeMemory.put(address, b, 0, size);
    }

    private static byte[] bytes(long address, int size) {
        byte[] b = new byte[size];
        NativeMemory.get(address, b, 0, size);
        return b;
    }

    private static byte[] expected(int size, long seed) {
        byte[] b = new byte[size];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /**
     * A writes its DRAM into B's {@code kindAtB} memory, with a notification, then reads it back into
     * its own {@code kindOfReadBack} memory. Pretend-VRAM buffers must have been added to the engines'
     * {@link PretendVram}.
     */
    private void writeThenRead(Engine a, Engine b, long dstB, MemoryKind kindAtB, long backA, MemoryKind kindOfReadBack)
            throws Exception {
        a.loadPeer("b", b.connInfo());
        b.loadPeer("a", a.connInfo());
        long srcA = alloc(SIZE);
        fill(srcA, SIZE, 1);
        NativeMemory.fill(dstB, SIZE, (byte) 0);
        NativeMemory.fill(backA, SIZE, (byte) 0);
        RegisteredMemory ra = a.register(MemoryDescriptor.dram(srcA, SIZE));
        RegisteredMemory rback = a.register(new MemoryDescriptor(backA, SIZE, kindOfReadBack, 0));
        RegisteredMemory rb = b.register(new MemoryDescriptor(dstB, SIZE, kindAtB, 0));
        a.loadRemoteMetadata("b", rb.publicMetadata());

        Transfer w = a.session("b").write(List.of(ra.descriptor()), List.of(rb.descriptor()), "landed".getBytes());
        assertThat(w.await(Duration.ofSeconds(30))).as(() -> "write: " + w.error()).isEqualTo(TransferStatus.DONE);
        List<Notification> got = new ArrayList<>();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (got.isEmpty() && System.nanoTime() < deadline) {
            got.addAll(b.drainNotifications());
            Thread.sleep(5);
        }
        assertThat(got).as("the notification comes after the data").containsExactly(new Notification("a", "landed".getBytes()));
        assertThat(bytes(dstB, SIZE)).as("every byte written").isEqualTo(expected(SIZE, 1));

        Transfer r = a.session("b").read(List.of(rback.descriptor()), List.of(rb.descriptor()), null);
        assertThat(r.await(Duration.ofSeconds(30))).as(() -> "read: " + r.error()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(backA, SIZE)).as("every byte read back").isEqualTo(expected(SIZE, 1));
    }

    /**
     * v7-blocking: connect and accept wait inside the plugin until the other side is there
     * (nccl-fastsocket's shape), so each engine's peer can connect only once the engine sent its
     * handles; v8-nullopt: null irecvConsumed and getDeviceMr (aws-ofi-nccl's shape).
     */
    @ParameterizedTest
    @ValueSource(strings = {"v6", "v7", "v7-blocking", "v8-nullopt"})
    void writeAndReadHostMemory(String peer) throws Exception {
        writeThenRead(engine("a", peer, new HostMemory(), new CpuScatterGather()),
                engine("b", peer, new HostMemory(), new CpuScatterGather()), alloc(SIZE), MemoryKind.DRAM, alloc(SIZE),
                MemoryKind.DRAM);
    }

    /**
     * B's write destination and A's read-back buffer are VRAM to the engines (so they register
     * NCCL_PTR_CUDA and the v7 peer's devmem path runs: bounce pages, fragments read from the
     * request's unpack slot, irecvConsumed), host memory underneath, unpacked by the CPU. The WRITE
     * lands through B's fragments, the READ through A's.
     */
    @Test
    void writeAndReadPretendVramThroughFragmentsOnV7() throws Exception {
        TestPeers.requireTestPeer("host memory registered as NCCL_PTR_CUDA (PretendVram; a real plugin needs GPU memory)");
        PretendVram memory = new PretendVram();
        PretendVram.Unpacking atA = memory.new Unpacking();
        PretendVram.Unpacking atB = memory.new Unpacking();
        Engine a = engine("a", "v7", memory, atA);
        Engine b = engine("b", "v7", memory, atB);
        long dstB = alloc(SIZE);
        long backA = alloc(SIZE);
        memory.add(dstB, SIZE);
        memory.add(backA, SIZE);
        writeThenRead(a, b, dstB, MemoryKind.VRAM, backA, MemoryKind.VRAM);
        assertThat(atB.fragments).as("the write came through bounce-page fragments at B").isGreaterThanOrEqualTo(SIZE / 4096);
        assertThat(atA.fragments).as("the read came through bounce-page fragments at A").isGreaterThanOrEqualTo(SIZE / 4096);
    }

    /**
     * ncclNet v6 has no device handles, and a v8 plugin without irecvConsumed reports a HOST device:
     * CUDA receives land in place, nothing to unpack.
     */
    @ParameterizedTest
    @ValueSource(strings = {"v6", "v8-nullopt"})
    void writeAndReadPretendVramInPlace(String peer) throws Exception {
        PretendVram memory = new PretendVram();
        PretendVram.Unpacking atA = memory.new Unpacking();
        PretendVram.Unpacking atB = memory.new Unpacking();
        Engine a = engine("a", peer, memory, atA);
        Engine b = engine("b", peer, memory, atB);
        long dstB = alloc(SIZE);
        long backA = alloc(SIZE);
        memory.add(dstB, SIZE);
        memory.add(backA, SIZE);
        writeThenRead(a, b, dstB, MemoryKind.VRAM, backA, MemoryKind.VRAM);
        assertThat(atA.fragments + atB.fragments).as("no fragments without an UNPACK device").isZero();
    }

    /**
     * KV-cache-shaped: 96 pretend-VRAM descriptors of 16 KiB on both sides, in reverse order with a gap
     * after each at B, so that every packed chunk goes through device staging registered as CUDA memory
     * on the plugin: gathered by A's unpacker, then on v7 scattered from B's bounce-page fragments
     * straight into the descriptors, on v6 (receives land in place) copied out of B's staging. READ
     * back the same way in the other direction; every byte and gap compared.
     */
    @ParameterizedTest
    @ValueSource(strings = {"v7", "v6"})
    void packedPretendVramDescriptorsGoThroughDeviceStaging(String peer) throws Exception {
        TestPeers.requireTestPeer("host memory registered as NCCL_PTR_CUDA (PretendVram; a real plugin needs GPU memory)");
        PretendVram memory = new PretendVram();
        PretendVram.Unpacking atA = memory.new Unpacking();
        PretendVram.Unpacking atB = memory.new Unpacking();
        Engine a = engine("a", peer, memory, atA);
        Engine b = engine("b", peer, memory, atB);
        a.loadPeer("b", b.connInfo());
        b.loadPeer("a", a.connInfo());
        int n = 96;
        int block = 16 * 1024;
        int gap = 4096;
        int span = n * (block + gap);
        long srcA = alloc(n * block);
        long dstB = alloc(span);
        long backA = alloc(n * block);
        memory.add(srcA, n * block);
        memory.add(dstB, span);
        memory.add(backA, n * block);
        fill(srcA, n * block, 3);
        NativeMemory.fill(dstB, span, (byte) 0x5A);
        RegisteredMemory ra = a.register(MemoryDescriptor.vram(srcA, n * block, 0));
        a.register(MemoryDescriptor.vram(backA, n * block, 0));
        RegisteredMemory rb = b.register(MemoryDescriptor.vram(dstB, span, 0));
        a.loadRemoteMetadata("b", rb.publicMetadata());
        List<MemoryDescriptor> src = new ArrayList<>();
        List<MemoryDescriptor> dst = new ArrayList<>();
        List<MemoryDescriptor> back = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            src.add(MemoryDescriptor.vram(srcA + (long) (n - 1 - i) * block, block, 0));
            dst.add(MemoryDescriptor.vram(dstB + (long) (n - 1 - i) * (block + gap), block, 0));
            back.add(MemoryDescriptor.vram(backA + (long) i * block, block, 0));
        }
        Transfer w = a.session("b").write(src, dst, null);
        assertThat(w.await(Duration.ofSeconds(30))).as(() -> "write: " + w.error()).isEqualTo(TransferStatus.DONE);
        byte[] want = expected(n * block, 3);
        byte[] landed = bytes(dstB, span);
        for (int i = 0; i < n; i++) {
            int at = (n - 1 - i) * (block + gap);
            int from = (n - 1 - i) * block;
            assertThat(java.util.Arrays.copyOfRange(landed, at, at + block)).as("descriptor %d", i)
                    .isEqualTo(java.util.Arrays.copyOfRange(want, from, from + block));
            assertThat(java.util.Arrays.copyOfRange(landed, at + block, at + block + gap)).as("gap after %d", i)
                    .containsOnly((byte) 0x5A);
        }
        Transfer r = a.session("b").read(back, dst, null);
        assertThat(r.await(Duration.ofSeconds(30))).as(() -> "read: " + r.error()).isEqualTo(TransferStatus.DONE);
        byte[] read = bytes(backA, n * block);
        for (int i = 0; i < n; i++) {
            int from = (n - 1 - i) * block;
            assertThat(java.util.Arrays.copyOfRange(read, i * block, (i + 1) * block)).as("read back %d", i)
                    .isEqualTo(java.util.Arrays.copyOfRange(want, from, from + block));
        }
        assertThat(atA.copies).as("A gathered the WRITE's packed chunks on the device").isGreaterThanOrEqualTo(n);
        assertThat(atB.copies).as("B gathered the READ's packed chunks on the device").isGreaterThanOrEqualTo(n);
        if (peer.equals("v7")) {
            // 1.5 MiB would pack into three chunks of 512 KiB; spread over two channels it goes as four of
            // 384 KiB (two per channel), 24 descriptors of 16 KiB each
            assertThat(atB.scatters).as("B scattered the WRITE from bounce pages").isEqualTo(n / 24);
        } else {
            assertThat(atA.scatters + atB.scatters).as("in place: nothing from bounce pages").isZero();
        }
    }

    /**
     * The peer's engine never connects its data channels (a transport double that answers "not yet"
     * to every connect), while this side's plugin accept waits for that connection inside the plugin.
     * The write fails with an error naming the plugin and the call once the set-up timeout passed,
     * well before the engine's own connect timeout, and both engines close.
     */
    @Test
    void aPeerThatNeverConnectsFailsTheTransferWithTheSetupTimeoutAndCloseReturns() throws Exception {
        TcpxOptions options = TcpxOptions.defaults().withLibrary(TestPeers.path("v7-blocking"))
                .withProbeInChildProcess(false).withSetupTimeout(Duration.ofMillis(500));
        TcpxTransport ta = TcpxTransport.open(options, new HostMemory());
        TcpxTransport tb = TcpxTransport.open(options, new HostMemory());
        closeables.add(ta);
        closeables.add(tb);
        // inline limit 0: the write needs the data channels that never come up
        EngineConfig config = EngineConfig.defaults("a").withTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(60),
                Duration.ofSeconds(1)).withInlineLimit(0);
        Engine a = new Engine(io.tcpx4j.domain.EngineConfig.from(config), ta, new HostMemory(), new CpuScatterGather(),
                Clock.SYSTEM);
        Engine b = new Engine(io.tcpx4j.domain.EngineConfig.from(config.withName("b")),
                new NeverConnectsTransportDouble(tb), new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        a.start();
        b.start();
        a.loadPeer("b", b.connInfo());
        b.loadPeer("a", a.connInfo());
        long src = alloc(4096);
        long dst = alloc(4096);
        RegisteredMemory ra = a.register(MemoryDescriptor.dram(src, 4096));
        RegisteredMemory rb = b.register(MemoryDescriptor.dram(dst, 4096));
        a.loadRemoteMetadata("b", rb.publicMetadata());
        Transfer w = a.session("b").write(List.of(ra.descriptor()), List.of(rb.descriptor()), null);
        assertThat(w.await(Duration.ofSeconds(30))).as("the write ends").isEqualTo(TransferStatus.FAILED);
        assertThat(w.error()).hasValueSatisfying(e -> assertThat(e.getMessage())
                .contains(ta.pluginName(), "accept did not complete within 500 ms"));
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            a.close();
            b.close();
        }, "closing the engines hung");
    }

    /** Forwards everything but connect, which answers "not yet" forever without calling the plugin. */
    static final class NeverConnectsTransportDouble extends ForwardingNetTransport {
        NeverConnectsTransportDouble(NetTransport delegate) {
            super(delegate);
        }

        @Override
        public SendComm connect(int device, byte[] handle, DriverSelector driver) {
            return null;
        }
    }
}
