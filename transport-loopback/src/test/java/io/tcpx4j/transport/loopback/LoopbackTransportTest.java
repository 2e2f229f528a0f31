package io.tcpx4j.transport.loopback;

import com.google.inject.AbstractModule;
import com.google.inject.Guice;
import com.google.inject.Injector;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/** What the conformance suite cannot see: config validation, handle nonces, the page pool, staging, Guice. */
class LoopbackTransportTest {

    private final List<NetTransport> transports = new ArrayList<>();
    private final List<Long> memory = new ArrayList<>();

    @AfterEach
    void tearDown() {
        transports.forEach(NetTransport::close);
        memory.forEach(NativeMemory::free);
    }

    @Test
    void invalidConfigsSayWhichRuleTheyBreak() {
        LoopbackConfig d = LoopbackConfig.defaults();
        expect(() -> d.withSocketsPerComm(0), Code.INVALID_PARAM, "socketsPerComm must be 1..16");
        expect(() -> d.withDevices(0), Code.INVALID_PARAM, "devices must be 1..64");
        expect(() -> d.withBouncePagesPerComm(100), Code.INVALID_PARAM, "bouncePagesPerComm");
        expect(() -> d.withIoThreads(17), Code.INVALID_PARAM, "ioThreads");
        expect(() -> d.withBindHost(" "), Code.INVALID_PARAM, "bindHost");
        expect(() -> new LoopbackConfig.Faults(-2, Duration.ZERO, false), Code.INVALID_PARAM, "dropAfterBytes");
        expect(() -> new LoopbackConfig.Faults(-1, Duration.ofSeconds(-1), false), Code.INVALID_PARAM, "completionDelay");
    }

    @Test
    void constructionDoesNoIo() {
        LoopbackTransport t = new LoopbackTransport(LoopbackConfig.defaults().withBindHost("no-such-host.invalid"));
        transports.add(t);
        assertThat(t.capabilities()).contains(Capability.DEVMEM_RECEIVE, Capability.FAULT_INJECTION)
                .doesNotContain(Capability.CUDA_MEMORY);
        expect(() -> t.listen(0), Code.INVALID_PARAM, "does not resolve");
    }

    @Test
    void aHandleWithTheWrongNonceIsRejectedByTheListener() {
        NetTransport a = transport(LoopbackConfig.defaults());
        NetTransport b = transport(LoopbackConfig.defaults());
        Listener l = b.listen(0);
        HandleCodec.Handle h = HandleCodec.decode(l.handle());
        byte[] forged = HandleCodec.encode(h.address(), h.sockets(), h.device(), new byte[HandleCodec.NONCE_BYTES]);
        TransferException e = awaitConnectFailure(a, forged, b, l);
        assertThat(e.code()).isEqualTo(Code.INVALID_PARAM);
        assertThat(e.getMessage()).contains("wrong nonce");
        byte[] flipped = l.handle();
        flipped[30] ^= 1;
        expect(() -> a.connect(0, flipped), Code.INVALID_PARAM, "checksum");
    }

    @Test
    void aListenerThatIsGoneFailsTheConnect() {
        NetTransport a = transport(LoopbackConfig.defaults());
        byte[] handle = HandleCodec.encode(new InetSocketAddress("127.0.0.1", 1), 2, 0, new byte[16]);
        TransferException e = awaitConnectFailure(a, handle, null, null);
        assertThat(e.code()).isEqualTo(Code.REMOTE_DISCONNECT);
    }

    @Test
    void anExhaustedPagePoolIsBusyUntilAReceiveIsConsumed() {
        LoopbackConfig cfg = LoopbackConfig.defaults().withBouncePagesPerComm(2048);
        Pair p = connect(transport(cfg), transport(cfg));
        int max = NetRequest.MAX_FRAGMENTS * 4096;
        long src = alloc(max);
        long dst = alloc(max + 4096);
        fillRandom(src, max, 1);
        MemoryRegistration sr = p.a.register(p.send, src, max, PtrType.HOST);
        MemoryRegistration rr = p.b.register(p.recv, dst, max + 4096, PtrType.HOST);
        expect(() -> p.b.irecv(p.recv, dst, max + 1, 0, rr), Code.INVALID_PARAM, "at most 2048 bounce pages");
        NetRequest r = p.b.irecv(p.recv, dst, max, 0, rr);
        assertThat(r).isNotNull();
        assertThat(p.b.irecv(p.recv, dst, 1, 0, rr)).as("no page left, slots free").isNull();
        NetRequest s = p.a.isend(p.send, src, max, 0, sr);
        await(p.a, s);
        await(p.b, r);
        assertThat(r.fragmentCount()).isEqualTo(NetRequest.MAX_FRAGMENTS);
        assertThat(contiguousRuns(r)).as("pages are permuted, not one contiguous run").isGreaterThan(100);
        CpuScatterGather.unpack(r, dst);
        p.b.consumed(p.recv, r);
        assertSame(src, dst, max);
        assertThat(p.b.irecv(p.recv, dst, 1, 0, rr)).as("pages came back at consume").isNotNull();
    }

    @Test
    void cudaSourcesAreStagedThroughPinnedMemoryOnGpuHosts() {
        FakeGpuMemoryDouble gpu = new FakeGpuMemoryDouble();
        LoopbackConfig cfg = LoopbackConfig.defaults();
        NetTransport a = transport(new LoopbackTransport(cfg, gpu));
        NetTransport b = transport(new LoopbackTransport(cfg, gpu));
        assertThat(a.capabilities()).contains(Capability.CUDA_MEMORY);
        Pair p = connect(a, b);
        int size = 3 * 4096 + 5;
        long src = alloc(4 * 4096);
        long dst = alloc(4 * 4096);
        fillRandom(src, size, 2);
        MemoryRegistration sr = a.register(p.send, src, 4 * 4096, PtrType.CUDA);
        MemoryRegistration rr = b.register(p.recv, dst, 4 * 4096, PtrType.CUDA);
        for (int i = 0; i < 3; i++) {
            NetRequest r = b.irecv(p.recv, dst, size, 0, rr);
            NetRequest s = a.isend(p.send, src, size, 0, sr);
            await(a, s);
            await(b, r);
            assertThat(r.fragmentCount()).as("CUDA receives always land in bounce pages").isEqualTo(4);
            CpuScatterGather.unpack(r, dst);
            b.consumed(p.recv, r);
            assertSame(src, dst, size);
        }
        assertThat(gpu.copies.get()).as("one device-to-host staging copy per send").isEqualTo(3);
        assertThat(gpu.pinned.get()).as("bounce pages, fragment tables and staging are pinned").isGreaterThanOrEqualTo(3);
    }

    @Test
    void theModuleBindsASingletonTransportAndUsesAnOptionalDeviceMemory() {
        Injector plain = Guice.createInjector(new LoopbackTransportModule());
        NetTransport t = plain.getInstance(NetTransport.class);
        transports.add(t);
        assertThat(t).isInstanceOf(LoopbackTransport.class).isSameAs(plain.getInstance(NetTransport.class));
        assertThat(t.capabilities()).doesNotContain(Capability.CUDA_MEMORY);
        assertThat(plain.getInstance(LoopbackConfig.class).devmem()).as("host receives land in place").isFalse();
        assertThat(plain.getInstance(LoopbackConfig.class).socketsPerComm())
                .isEqualTo(LoopbackConfig.defaults().socketsPerComm());

        Injector withGpu = Guice.createInjector(new LoopbackTransportModule(LoopbackConfig.defaults()),
                new AbstractModule() {
                    @Override
                    protected void configure() {
                        bind(DeviceMemory.class).toInstance(new FakeGpuMemoryDouble());
                    }
                });
        NetTransport g = withGpu.getInstance(NetTransport.class);
        transports.add(g);
        assertThat(g.capabilities()).contains(Capability.CUDA_MEMORY);
    }

    // ---- helpers

    private record Pair(NetTransport a, SendComm send, NetTransport b, RecvComm recv) {
    }

    private NetTransport transport(LoopbackConfig cfg) {
        return transport(new LoopbackTransport(cfg.withIoThreads(1)));
    }

    private NetTransport transport(NetTransport t) {
        transports.add(t);
        return t;
    }

    private static Pair connect(NetTransport a, NetTransport b) {
        Listener l = b.listen(0);
        SendComm s = null;
        RecvComm r = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (s == null || r == null) {
            s = s != null ? s : a.connect(0, l.handle());
            r = r != null ? r : b.accept(l);
            if (System.nanoTime() > deadline) {
                fail("connect timed out");
            }
            LockSupport.parkNanos(1_000_000);
        }
        return new Pair(a, s, b, r);
    }

    private static TransferException awaitConnectFailure(NetTransport a, byte[] handle, NetTransport b, Listener l) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                assertThat(a.connect(0, handle)).isNull();
            } catch (TransferException e) {
                return e;
            }
            if (b != null) {
                assertThat(b.accept(l)).isNull();
            }
            LockSupport.parkNanos(1_000_000);
        }
        return fail("connect did not fail");
    }

    private static void await(NetTransport t, NetRequest r) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!t.test(r)) {
            if (System.nanoTime() > deadline) {
                fail("request did not complete");
            }
            LockSupport.parkNanos(100_000);
        }
    }

    private static int contiguousRuns(NetRequest r) {
        int runs = 1;
        for (int i = 1; i < r.fragmentCount(); i++) {
            long prev = Integer.toUnsignedLong(NativeMemory.getInt(r.fragmentsAddress() + (i - 1) * 16L));
            long cur = Integer.toUnsignedLong(NativeMemory.getInt(r.fragmentsAddress() + i * 16L));
            if (cur != prev + 4096) {
                runs++;
            }
        }
        return runs;
    }

    private long alloc(int size) {
        long a = NativeMemory.allocate(size, 4096);
        NativeMemory.fill(a, size, (byte) 0);
        memory.add(a);
        return a;
    }

    private static void fillRandom(long addr, int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        NativeMemory.put(addr, b, 0, size);
    }

    private static void assertSame(long src, long dst, int size) {
        for (int i = 0; i < size; i++) {
            if (NativeMemory.getByte(src + i) != NativeMemory.getByte(dst + i)) {
                fail("byte " + i + " of " + size + " differs");
            }
        }
    }

    private static void expect(Runnable r, Code code, String message) {
        assertThatThrownBy(r::run).isInstanceOfSatisfying(TransferException.class, e -> {
            assertThat(e.code()).isEqualTo(code);
            assertThat(e.getMessage()).contains(message);
        });
    }

    /**
     * Test double of a GPU host's DeviceMemory: "VRAM" is host memory, asynchronous copies finish on
     * the second poll (so the transport really waits for staging), and it counts what it was asked.
     */
    static final class FakeGpuMemoryDouble implements DeviceMemory {
        final AtomicInteger copies = new AtomicInteger();
        final AtomicInteger pinned = new AtomicInteger();
        private final AtomicInteger polls = new AtomicInteger();
        private final HostMemory host = new HostMemory();

        @Override
        public boolean hasDevices() {
            return true;
        }

        @Override
        public MemoryKind kindOf(long address) {
            return MemoryKind.VRAM;
        }

        @Override
        public MemoryDescriptor allocationRange(long address, long length) {
            return MemoryDescriptor.vram(address, length, 0);
        }

        @Override
        public MemoryDescriptor allocate(MemoryKind kind, long size, int device) {
            return host.allocate(MemoryKind.DRAM, size, device);
        }

        @Override
        public MemoryDescriptor allocatePinned(long size) {
            pinned.incrementAndGet();
            return host.allocatePinned(size);
        }

        @Override
        public void free(MemoryDescriptor memory) {
            host.free(memory);
        }

        @Override
        public void copy(MemoryDescriptor destination, MemoryDescriptor source) {
            NativeMemory.copy(source.address(), destination.address(), source.length());
        }

        @Override
        public long copyAsync(MemoryDescriptor destination, MemoryDescriptor source) {
            copies.incrementAndGet();
            copy(destination, source);
            return 42;
        }

        @Override
        public boolean isDone(long ticket) {
            return polls.incrementAndGet() % 2 == 0;
        }
    }
}
