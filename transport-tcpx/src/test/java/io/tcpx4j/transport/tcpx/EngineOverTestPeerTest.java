package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.memory.CpuUnpacker;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.Unpacker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/** Two engines in this JVM, WRITE and READ through TcpxTransport and the C test peer (v7). */
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

    private Engine engine(String name, DeviceMemory memory, Unpacker unpacker) {
        TcpxTransport t = TcpxTransport.open(TcpxOptions.defaults().withLibrary(TestPeers.path("v7"))
                .withProbeInChildProcess(false), memory);
        closeables.add(t);
        Engine e = new Engine(EngineConfig.defaults(name), t, memory, unpacker, Clock.SYSTEM);
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

    private void writeThenRead(Engine a, Engine b, MemoryKind kindAtB) throws Exception {
        a.loadPeer("b", b.connInfo());
        b.loadPeer("a", a.connInfo());
        long srcA = alloc(SIZE);
        long dstB = alloc(SIZE);
        long backA = alloc(SIZE);
        fill(srcA, SIZE, 1);
        NativeMemory.fill(dstB, SIZE, (byte) 0);
        RegisteredMemory ra = a.register(MemoryDescriptor.dram(srcA, SIZE));
        RegisteredMemory rback = a.register(MemoryDescriptor.dram(backA, SIZE));
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
        assertThat(got).containsExactly(new Notification("a", "landed".getBytes()));
        assertThat(bytes(dstB, SIZE)).as("every byte written").isEqualTo(expected(SIZE, 1));

        Transfer r = a.session("b").read(List.of(rback.descriptor()), List.of(rb.descriptor()), null);
        assertThat(r.await(Duration.ofSeconds(30))).as(() -> "read: " + r.error()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(backA, SIZE)).as("every byte read back").isEqualTo(expected(SIZE, 1));
    }

    @Test
    void writeAndReadHostMemory() throws Exception {
        writeThenRead(engine("a", new HostMemory(), new CpuUnpacker()), engine("b", new HostMemory(), new CpuUnpacker()),
                MemoryKind.DRAM);
    }

    /**
     * B's destination is "VRAM" to the engine (so it registers NCCL_PTR_CUDA and the peer's devmem
     * path runs: bounce pages, fragments read from the request's unpack slot, irecvConsumed), but it
     * is host memory underneath, unpacked by the CPU.
     */
    @Test
    void writeIntoPretendVramGoesThroughFragments() throws Exception {
        PretendVram vram = new PretendVram();
        CountingUnpacker unpacker = new CountingUnpacker();
        Engine b = engine("b", vram, unpacker);
        Engine a = engine("a", new HostMemory(), new CpuUnpacker());
        long dst = alloc(SIZE);
        vram.add(dst);
        a.loadPeer("b", b.connInfo());
        b.loadPeer("a", a.connInfo());
        long src = alloc(SIZE);
        fill(src, SIZE, 9);
        NativeMemory.fill(dst, SIZE, (byte) 0);
        RegisteredMemory ra = a.register(MemoryDescriptor.dram(src, SIZE));
        RegisteredMemory rb = b.register(MemoryDescriptor.vram(dst, SIZE, 0));
        a.loadRemoteMetadata("b", rb.publicMetadata());
        Transfer w = a.session("b").write(List.of(ra.descriptor()), List.of(rb.descriptor()), null);
        assertThat(w.await(Duration.ofSeconds(30))).as(() -> "write: " + w.error()).isEqualTo(TransferStatus.DONE);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!java.util.Arrays.equals(bytes(dst, SIZE), expected(SIZE, 9)) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(bytes(dst, SIZE)).isEqualTo(expected(SIZE, 9));
        assertThat(unpacker.fragments).as("data came through bounce-page fragments").isGreaterThanOrEqualTo(SIZE / 4096);
    }

    /** Host memory that claims to be VRAM for chosen allocations. */
    static final class PretendVram implements DeviceMemory {
        private final HostMemory host = new HostMemory();
        private final Set<Long> vram = ConcurrentHashMap.newKeySet();

        void add(long address) {
            vram.add(address);
        }

        @Override
        public boolean hasDevices() {
            return true;
        }

        @Override
        public MemoryKind kindOf(long address) {
            for (long v : vram) {
                if (address >= v && address < v + SIZE) {
                    return MemoryKind.VRAM;
                }
            }
            return MemoryKind.DRAM;
        }

        @Override
        public MemoryDescriptor allocationRange(long address, long length) {
            for (long v : vram) {
                if (address >= v && address < v + SIZE) {
                    return MemoryDescriptor.vram(v, SIZE, 0);
                }
            }
            return MemoryDescriptor.dram(address, length);
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

        @Override
        public long copyAsync(MemoryDescriptor destination, MemoryDescriptor source) {
            copy(destination, source);
            return 1;
        }

        @Override
        public boolean isDone(long ticket) {
            return true;
        }
    }

    /** CPU unpacking for any kinds (all host memory here), counting fragments. */
    static final class CountingUnpacker implements Unpacker {
        volatile long fragments;
        private long ticket;

        @Override
        public void add(NetRequest request, long destination, MemoryKind destinationKind) {
            fragments += request.fragmentCount();
            CpuUnpacker.unpack(request, destination);
        }

        @Override
        public long submit() {
            return ++ticket;
        }

        @Override
        public boolean isDone(long t) {
            return true;
        }
    }
}
