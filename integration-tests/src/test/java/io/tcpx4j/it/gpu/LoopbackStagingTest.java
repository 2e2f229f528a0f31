package io.tcpx4j.it.gpu;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
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
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The loopback transport's staging of CUDA sources on a GPU host, without a GPU: a
 * {@link DeviceMemory} double whose "VRAM" is host memory, whose asynchronous copies finish
 * {@link SlowCopyMemory#COPY_NANOS} after they start (raising no event, like a CUDA copy), and
 * whose allocations report a GPU ordinal other than 0.
 */
class LoopbackStagingTest {

    private final List<NetTransport> transports = new ArrayList<>();
    private final List<Long> buffers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        transports.forEach(NetTransport::close);
        buffers.forEach(NativeMemory::free);
    }

    /**
     * One send at a time, each waiting for a 150 us staging copy that raises no event: every staged send
     * must still go out, in order, with its own bytes. (How soon it goes out is a speed question for the
     * GPU pair benchmark, docs/PERFORMANCE.md "GPU pair", not for a timed test; the median is
     * printed for the curious.)
     */
    @ParameterizedTest(name = "{0} I/O threads")
    @ValueSource(ints = {1, 0})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void everyStagedSendGoesOutOnceItsCopyFinishes(int ioThreads) {
        SlowCopyMemory gpu = new SlowCopyMemory(0);
        Pair p = connect(gpu, ioThreads);
        int size = 64 << 10;
        long src = alloc(size);
        long dst = alloc(size);
        MemoryRegistration sr = p.a.register(p.send, src, size, PtrType.CUDA);
        MemoryRegistration rr = p.b.register(p.recv, dst, size, PtrType.HOST);
        int rounds = 200;
        long[] micros = new long[rounds];
        for (int i = 0; i < rounds; i++) {
            NativeMemory.putLong(src, i);
            NativeMemory.putLong(src + size - 8, ~i);
            long t0 = System.nanoTime();
            NetRequest r = p.b.irecv(p.recv, dst, size, 0, rr);
            NetRequest s = p.a.isend(p.send, src, size, 0, sr);
            await(p.a, s);
            await(p.b, r);
            micros[i] = (System.nanoTime() - t0) / 1000;
            p.b.consumed(p.recv, r);
            assertThat(NativeMemory.getLong(dst)).as("round %d, first word", i).isEqualTo(i);
            assertThat(NativeMemory.getLong(dst + size - 8)).as("round %d, last word", i).isEqualTo(~i);
        }
        Arrays.sort(micros);
        System.out.println("[staging] median send round trip " + micros[rounds / 2] + " us over " + rounds + " rounds");
    }

    @ParameterizedTest(name = "{0} I/O threads")
    @ValueSource(ints = {1, 0})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void stagingCopiesRunOnTheGpuThatOwnsTheSource(int ioThreads) {
        SlowCopyMemory gpu = new SlowCopyMemory(3);
        Pair p = connect(gpu, ioThreads);
        int size = 3 * 4096;
        long src = alloc(size);
        long dst = alloc(size);
        MemoryRegistration sr = p.a.register(p.send, src, size, PtrType.CUDA);
        MemoryRegistration rr = p.b.register(p.recv, dst, size, PtrType.HOST);
        NetRequest r = p.b.irecv(p.recv, dst, size, 0, rr);
        NetRequest s = p.a.isend(p.send, src, size, 0, sr);
        await(p.a, s);
        await(p.b, r);
        p.b.consumed(p.recv, r);
        // it used to name GPU 0 for every source, wrong wherever a process drives several GPUs
        assertThat(gpu.copies).as("GPU ordinals of the staging copies' sources").containsExactly(3);
    }

    // ---- helpers

    private record Pair(NetTransport a, SendComm send, NetTransport b, RecvComm recv) {
    }

    /**
     * A sender on {@code gpu} and a host receiver. Without I/O threads a staging copy raises no socket event,
     * so the sender must not claim that a driver may block on its sockets while requests are out.
     */
    private Pair connect(DeviceMemory gpu, int ioThreads) {
        LoopbackConfig cfg = LoopbackConfig.defaults().withDevmem(false).withIoThreads(ioThreads).withSocketsPerComm(2);
        NetTransport a = new LoopbackTransport(cfg, gpu);
        NetTransport b = new LoopbackTransport(cfg);
        assertThat(a.capabilities()).doesNotContain(Capability.DRIVER_SOCKETS);
        transports.add(a);
        transports.add(b);
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
            LockSupport.parkNanos(100_000);
        }
        return new Pair(a, s, b, r);
    }

    /** Spins on test(): the time measured is the transport's, not a poller's sleep. */
    private static void await(NetTransport t, NetRequest r) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!t.test(r)) {
            if (System.nanoTime() > deadline) {
                fail("request did not complete");
            }
            Thread.onSpinWait();
        }
    }

    private long alloc(int size) {
        long a = NativeMemory.allocate(size, 4096);
        NativeMemory.fill(a, size, (byte) 0);
        buffers.add(a);
        return a;
    }

    /** "VRAM" on GPU {@code device} that is host memory; async copies finish COPY_NANOS after they start. */
    static final class SlowCopyMemory implements DeviceMemory {
        static final long COPY_NANOS = 150_000;
        final Set<Integer> copies = ConcurrentHashMap.newKeySet();
        private final HostMemory host = new HostMemory();
        private final int device;

        SlowCopyMemory(int device) {
            this.device = device;
        }

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
            return MemoryDescriptor.vram(address, length, device);
        }

        @Override
        public MemoryDescriptor allocate(MemoryKind kind, long size, int device) {
            return host.allocate(MemoryKind.DRAM, size, device);
        }

        @Override
        public MemoryDescriptor allocatePinned(long size) {
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

        /** The ticket is the time the copy is done; the bytes are copied at once. */
        @Override
        public long copyAsync(MemoryDescriptor destination, MemoryDescriptor source) {
            copies.add(source.kind() == MemoryKind.VRAM ? source.device() : -1);
            copy(destination, source);
            return System.nanoTime() + COPY_NANOS;
        }

        @Override
        public boolean isDone(long ticket) {
            return ticket == 0 || System.nanoTime() - ticket >= 0;
        }
    }
}
