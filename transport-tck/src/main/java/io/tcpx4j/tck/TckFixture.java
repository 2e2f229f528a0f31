package io.tcpx4j.tck;

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
import io.tcpx4j.domain.port.out.ScatterGather;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * What the checks of {@link NetTransportConformanceTest} stand on: the hooks an adapter's test overrides,
 * the two transports every check uses ({@code a} sends, {@code b} receives), and the helpers that connect
 * them, post and await requests, unpack fragmented receives and verify every byte. Everything it makes
 * is closed or freed after each check.
 */
public abstract class TckFixture {

    private static final int GUARD = 4096;
    private static final byte GUARD_BYTE = 0x5A;
    static final int PAGE = 4096;

    /** Sender side endpoint. */
    protected NetTransport a;
    /** Receiver side endpoint. */
    protected NetTransport b;

    private final List<NetTransport> transports = new ArrayList<>();
    private final List<Buf> buffers = new ArrayList<>();
    private final List<ScatterGather> scatterGathers = new ArrayList<>();
    private final long seed = System.nanoTime();
    final Random random = new Random(seed);

    // ---- hooks

    /** A new, independent transport endpoint. Called twice per test (and more by some tests). */
    protected abstract NetTransport newTransport();

    /**
     * Memory services for CUDA buffers (allocation and copies) when the transport declares
     * {@link Capability#CUDA_MEMORY}. Default: host only.
     */
    protected DeviceMemory deviceMemory() {
        return new HostMemory();
    }

    /**
     * A scatter-gather for fragmented receives. Default: the CPU one (host bounce pages and destinations).
     */
    protected ScatterGather newScatterGather() {
        return new CpuScatterGather();
    }

    /**
     * Memory whose receives land in bounce pages when {@link Capability#DEVMEM_RECEIVE} is declared:
     * CUDA for TCPX; HOST for a transport that bounces every receive (loopback devmem mode).
     */
    protected PtrType devmemPtrType() {
        return PtrType.HOST;
    }

    /**
     * A transport that injects {@code faults}, for transports declaring
     * {@link Capability#FAULT_INJECTION}; others keep this default, which throws NOT_SUPPORTED.
     */
    protected NetTransport newFaultyTransport(TckFaults faults) {
        throw new TransferException(Code.NOT_SUPPORTED, "no fault injection");
    }

    /** Longest any single wait may take before the test fails. */
    protected Duration deadline() {
        return Duration.ofSeconds(10);
    }

    /** Network device the suite uses. */
    protected int device() {
        return 0;
    }

    // ---- fixture

    @BeforeEach
    void openTransports() {
        a = track(newTransport());
        b = track(newTransport());
    }

    @AfterEach
    void closeTransports() {
        // transports first: they may still touch the buffers until closed
        assertTimeoutPreemptively(deadline(), () -> {
            for (NetTransport t : transports) {
                t.close();
            }
        }, "close() of a transport hung");
        for (ScatterGather u : scatterGathers) {
            u.close();
        }
        for (Buf buf : buffers) {
            buf.free();
        }
    }

    /** Registers a transport for closing after the test. */
    protected final NetTransport track(NetTransport t) {
        transports.add(t);
        return t;
    }


    // ---- helpers: channels and requests

    /** One direction: {@code send} on the sender transport, {@code recv} on the receiver transport. */
    protected record Channel(NetTransport sender, SendComm send, NetTransport receiver, RecvComm recv) {
    }

    protected final Channel connect(NetTransport from, NetTransport to) {
        return connect(from, to, to.listen(device()));
    }

    /** Polls connect and accept in turn until both return their comm. */
    protected final Channel connect(NetTransport from, NetTransport to, Listener l) {
        byte[] handle = l.handle();
        SendComm s = null;
        RecvComm r = null;
        long deadline = System.nanoTime() + deadline().toNanos();
        while (s == null || r == null) {
            if (s == null) {
                s = from.connect(device(), handle);
            }
            if (r == null) {
                r = to.accept(l);
            }
            checkDeadline(deadline, "connect/accept");
            LockSupport.parkNanos(1_000_000);
        }
        return new Channel(from, s, to, r);
    }

    NetRequest postSend(Channel c, long addr, int size, MemoryRegistration reg) {
        return posted(require(c.sender().isend(c.send(), addr, size, 0, reg), "isend with free slots"), size);
    }

    NetRequest postRecv(Channel c, long addr, int size, MemoryRegistration reg) {
        return tracked(posted(require(c.receiver().irecv(c.recv(), addr, size, 0, reg), "irecv with free slots"),
                size), addr);
    }

    private static NetRequest posted(NetRequest r, int size) {
        assertThat(r.size()).as("size() of a request just posted").isEqualTo(size);
        return r;
    }

    /** Remembers where a receive's fragments unpack to (requests are pooled: the latest post wins). */
    NetRequest tracked(NetRequest r, long destination) {
        destinations.put(r, destination);
        return r;
    }

    static NetRequest require(NetRequest r, String what) {
        assertThat(r).as(what + " returned BUSY").isNotNull();
        return r;
    }

    void awaitDone(NetTransport t, NetRequest r, String what) {
        long deadline = System.nanoTime() + deadline().toNanos();
        while (!t.test(r)) {
            checkDeadline(deadline, what);
            LockSupport.parkNanos(100_000);
        }
    }

    /** Completes sends and receives (FIFO per comm), unpacking and consuming the receives. */
    void drain(Channel c, ArrayDeque<NetRequest> sends, ArrayDeque<NetRequest> recvs, Buf dst) {
        long deadline = System.nanoTime() + deadline().toNanos();
        ScatterGather u = scatterGather();
        while (!sends.isEmpty() || !recvs.isEmpty()) {
            if (!sends.isEmpty() && c.sender().test(sends.peek())) {
                sends.poll();
            }
            if (!recvs.isEmpty() && c.receiver().test(recvs.peek())) {
                NetRequest r = recvs.poll();
                unpack(u, r, destinationOf(r, dst), dst.kind);
                c.receiver().consumed(c.recv(), r);
            }
            checkDeadline(deadline, sends.size() + " sends and " + recvs.size() + " receives outstanding");
            LockSupport.parkNanos(50_000);
        }
    }

    /** Destinations are tracked by the tests that need them; the rest receive at the buffer's start. */
    private final java.util.IdentityHashMap<NetRequest, Long> destinations = new java.util.IdentityHashMap<>();

    long destinationOf(NetRequest r, Buf dst) {
        Long d = destinations.remove(r);
        return d != null ? d : dst.addr;
    }

    TransferException awaitFailure(ThrowingCheck step, String what) {
        long deadline = System.nanoTime() + deadline().toNanos();
        while (true) {
            try {
                if (step.done()) {
                    fail(what + ": completed, expected a TransferException");
                }
            } catch (TransferException e) {
                return e;
            }
            checkDeadline(deadline, what + ": no failure surfaced");
            LockSupport.parkNanos(1_000_000);
        }
    }

    @FunctionalInterface
    interface ThrowingCheck {
        boolean done();
    }

    void checkDeadline(long deadlineNanos, String what) {
        if (System.nanoTime() - deadlineNanos > 0) {
            fail(what + ": not done within " + deadline() + " (seed " + seed + ")");
        }
    }

    static void expectCode(Runnable r, Code code) {
        assertThatThrownBy(r::run).isInstanceOfSatisfying(TransferException.class,
                e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(code));
    }

    ScatterGather scatterGather() {
        ScatterGather u = newScatterGather();
        scatterGathers.add(u);
        return u;
    }

    /** Unpacks a completed receive's fragments (if any) and waits for the batch. */
    void unpack(ScatterGather u, NetRequest r, long destination, MemoryKind kind) {
        if (r.fragmentCount() == 0) {
            return;
        }
        u.add(r, destination, kind);
        long ticket = u.submit();
        long deadline = System.nanoTime() + deadline().toNanos();
        while (ticket != 0 && !u.isDone(ticket)) {
            checkDeadline(deadline, "unpack");
            LockSupport.parkNanos(100_000);
        }
    }

    /** Fragments: in bounds of a page each, destinations covering [0, size) exactly once. */
    static void checkFragments(NetRequest r, int size) {
        int n = r.fragmentCount();
        assertThat(n).as("fragments of a devmem receive of %d bytes", size).isBetween(size == 0 ? 0 : 1,
                NetRequest.MAX_FRAGMENTS);
        assertThat(r.bounceBase()).as("bounce base of a fragmented receive").isNotZero();
        assertThat(r.bounceKind()).as("bounce kind of a fragmented receive").isNotNull();
        long[][] frags = new long[n][];
        for (int i = 0; i < n; i++) {
            long rec = r.fragmentsAddress() + (long) i * NetRequest.FRAGMENT_BYTES;
            long src = Integer.toUnsignedLong(NativeMemory.getInt(rec));
            long len = Integer.toUnsignedLong(NativeMemory.getInt(rec + 4));
            long dst = NativeMemory.getLong(rec + 8);
            assertThat(len).as("fragment %d length", i).isBetween(1L, (long) PAGE);
            assertThat(src % PAGE + len).as("fragment %d stays inside its bounce page", i).isLessThanOrEqualTo(PAGE);
            assertThat(src + len).as("fragment %d stays inside the bounce area", i).isLessThanOrEqualTo(r.bounceBytes());
            frags[i] = new long[] {dst, len};
        }
        Arrays.sort(frags, (x, y) -> Long.compare(x[0], y[0]));
        long covered = 0;
        for (long[] f : frags) {
            assertThat(f[0]).as("fragments cover the receive without gap or overlap").isEqualTo(covered);
            covered += f[1];
        }
        assertThat(covered).as("fragments cover the whole receive").isEqualTo(size);
    }

    // ---- helpers: memory

    /** A buffer: host memory with guard pages around it, or CUDA memory. Capacity is page-rounded. */
    protected final class Buf {
        final long addr;
        final int capacity;
        final MemoryKind kind;
        private final long raw;
        private final MemoryDescriptor device;

        private Buf(long addr, int capacity, MemoryKind kind, long raw, MemoryDescriptor device) {
            this.addr = addr;
            this.capacity = capacity;
            this.kind = kind;
            this.raw = raw;
            this.device = device;
        }

        void free() {
            if (device != null) {
                deviceMemory().free(device);
            } else {
                NativeMemory.free(raw);
            }
        }
    }

    static int capacityFor(int size) {
        return Math.max(PAGE, (size + PAGE - 1) & -PAGE);
    }

    protected final Buf host(int size) {
        int cap = capacityFor(size);
        long raw = NativeMemory.allocate(cap + 2L * GUARD, PAGE);
        NativeMemory.fill(raw, cap + 2L * GUARD, GUARD_BYTE);
        Buf b = new Buf(raw + GUARD, cap, MemoryKind.DRAM, raw, null);
        buffers.add(b);
        return b;
    }

    protected final Buf cuda(int size) {
        int cap = capacityFor(size);
        MemoryDescriptor d = deviceMemory().allocate(MemoryKind.VRAM, cap, 0);
        Buf b = new Buf(d.address(), cap, MemoryKind.VRAM, 0, d);
        buffers.add(b);
        return b;
    }

    byte[] fillRandom(Buf buf, int size) {
        byte[] data = new byte[size];
        random.nextBytes(data);
        write(buf, data);
        return data;
    }

    /** Every destination byte starts as the complement of what must arrive, so a missed byte shows. */
    void poison(Buf buf, byte[] expected) {
        byte[] p = new byte[expected.length];
        for (int i = 0; i < p.length; i++) {
            p[i] = (byte) ~expected[i];
        }
        write(buf, p);
    }

    void write(Buf buf, byte[] data) {
        if (buf.kind == MemoryKind.DRAM) {
            NativeMemory.put(buf.addr, data, 0, data.length);
            return;
        }
        long tmp = NativeMemory.allocate(Math.max(1, data.length), PAGE);
        try {
            NativeMemory.put(tmp, data, 0, data.length);
            deviceMemory().copy(MemoryDescriptor.vram(buf.addr, data.length, 0), MemoryDescriptor.dram(tmp, data.length));
        } finally {
            NativeMemory.free(tmp);
        }
    }

    void verify(Buf buf, byte[] expected, int size) {
        byte[] actual = new byte[size];
        if (buf.kind == MemoryKind.DRAM) {
            NativeMemory.get(buf.addr, actual, 0, size);
            for (long g = buf.raw; g < buf.addr; g++) {
                if (NativeMemory.getByte(g) != GUARD_BYTE) {
                    fail("guard byte " + (buf.addr - g) + " before the buffer was overwritten");
                }
            }
            for (long g = buf.addr + size; g < buf.addr + buf.capacity + GUARD; g++) {
                // the test wrote only [0, size): anything after it must still be guard
                if (NativeMemory.getByte(g) != GUARD_BYTE) {
                    fail("byte " + (g - buf.addr) + " past the " + size + "-byte transfer was overwritten");
                }
            }
        } else {
            long tmp = NativeMemory.allocate(Math.max(1, size), PAGE);
            try {
                deviceMemory().copy(MemoryDescriptor.dram(tmp, size), MemoryDescriptor.vram(buf.addr, size, 0));
                NativeMemory.get(tmp, actual, 0, size);
            } finally {
                NativeMemory.free(tmp);
            }
        }
        for (int i = 0; i < size; i++) {
            if (actual[i] != expected[i]) {
                fail("byte " + i + " of " + size + " is " + actual[i] + ", expected " + expected[i] + " (seed " + seed + ")");
            }
        }
    }
}
