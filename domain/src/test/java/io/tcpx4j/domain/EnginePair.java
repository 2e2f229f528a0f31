package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.protocol.RegionMetadata;
import io.tcpx4j.domain.testing.InMemoryFabric;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two engines over the strict in-memory transport double, pumped by hand. Owns its native buffers.
 */
public final class EnginePair implements AutoCloseable {

    final InMemoryFabric fabric;
    public final NetTransport ta;
    public final NetTransport tb;
    public final Engine a;
    public final Engine b;
    private final List<Long> buffers = new ArrayList<>();
    final Random random = new Random(42);

    public EnginePair() {
        this(EngineConfig.defaults("alpha"), EngineConfig.defaults("beta"));
    }

    public EnginePair(EngineConfig ca, EngineConfig cb) {
        this(ca, cb, UnaryOperator.identity());
    }

    /** {@code wrap} may put a watching double around each engine's transport. */
    public EnginePair(EngineConfig ca, EngineConfig cb, UnaryOperator<NetTransport> wrap) {
        this(ca, cb, wrap, new HostMemory());
    }

    /** {@code memoryB}: beta's view of memory (a double may call some host memory VRAM). */
    public EnginePair(EngineConfig ca, EngineConfig cb, UnaryOperator<NetTransport> wrap, DeviceMemory memoryB) {
        this(ca, cb, wrap, new HostMemory(), new CpuScatterGather(), memoryB, new CpuScatterGather());
    }

    /** Each engine with its own view of memory and its own unpacker (doubles may call host memory VRAM). */
    public EnginePair(EngineConfig ca, EngineConfig cb, UnaryOperator<NetTransport> wrap, DeviceMemory memoryA,
               ScatterGather unpackerA, DeviceMemory memoryB, ScatterGather unpackerB) {
        this(ca, cb, wrap, InMemoryNetTransportDouble.Config.defaults(), memoryA, unpackerA, memoryB, unpackerB);
    }

    /** As above, both transports made with {@code transport} (devmem receives or not, say). */
    public EnginePair(EngineConfig ca, EngineConfig cb, UnaryOperator<NetTransport> wrap,
               InMemoryNetTransportDouble.Config transport, DeviceMemory memoryA, ScatterGather unpackerA,
               DeviceMemory memoryB, ScatterGather unpackerB) {
        fabric = new InMemoryFabric();
        ta = wrap.apply(fabric.newTransport(transport));
        tb = wrap.apply(fabric.newTransport(transport));
        a = new Engine(io.tcpx4j.domain.EngineConfig.from(ca), ta, memoryA, unpackerA, Clock.SYSTEM);
        b = new Engine(io.tcpx4j.domain.EngineConfig.from(cb), tb, memoryB, unpackerB, Clock.SYSTEM);
        a.startManual();
        b.startManual();
        a.loadPeer(b.name(), b.connInfo());
        b.loadPeer(a.name(), a.connInfo());
    }

    /** Pumps both engines until {@code done} or 20 s pass; returns whether it got done. */
    public boolean pump(BooleanSupplier done) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            int w = a.progress() + b.progress();
            if (w == 0) {
                Thread.onSpinWait();
            }
        }
        return true;
    }

    /** Pumps a fixed number of rounds (to show that nothing more happens). */
    void pumpRounds(int rounds) {
        for (int i = 0; i < rounds; i++) {
            a.progress();
            b.progress();
        }
    }

    public long alloc(long size) {
        long addr = NativeMemory.allocate(Math.max(size, 1), 4096);
        buffers.add(addr);
        return addr;
    }

    /** A buffer of {@code size} random bytes. */
    public long randomBuffer(long size) {
        long addr = alloc(size);
        byte[] chunk = new byte[64 * 1024];
        for (long off = 0; off < size; off += chunk.length) {
            random.nextBytes(chunk);
            NativeMemory.put(addr + off, chunk, 0, (int) Math.min(chunk.length, size - off));
        }
        return addr;
    }

    /** A buffer filled with a poison byte. */
    public long poisoned(long size, byte poison) {
        long addr = alloc(size);
        NativeMemory.fill(addr, Math.max(size, 1), poison);
        return addr;
    }

    public static byte[] read(long addr, long size) {
        byte[] out = new byte[(int) size];
        NativeMemory.get(addr, out, 0, out.length);
        return out;
    }

    /** Registers a range with {@code owner} and publishes it to the other engine. */
    RegisteredMemory share(Engine owner, MemoryDescriptor d) {
        RegisteredMemory r = owner.register(d);
        Engine other = owner == a ? b : a;
        other.loadRemoteMetadata(owner.name(), r.publicMetadata());
        return r;
    }

    private static final byte CHECK_POISON = (byte) 0x5A;
    private static final int CHECK_GUARD = 4096;

    /**
     * Alpha WRITEs (or READs) {@code sizes} as separate descriptors between a random buffer and a
     * poisoned one with a guard band after each destination; checks every byte, every guard and the
     * notification, which must never be seen before the data.
     */
    public void transferAndCheck(boolean write, long[] sizes) {
        transferAndCheck(write, sizes, false, true);
    }

    /**
     * As {@link #transferAndCheck(boolean, long[])}; {@code sourcesApart}: the sources lie in reverse order
     * (no descriptor follows its predecessor in memory), else back to back; {@code destinationsApart}: the
     * destinations lie in reverse order with a guard band after each, else back to back (guards before
     * the first and after the last).
     */
    public void transferAndCheck(boolean write, long[] sizes, boolean sourcesApart, boolean destinationsApart) {
        transferAndCheck(write, sizes, sourcesApart, destinationsApart, MemoryKind.DRAM);
    }

    /** As above, with descriptors and registrations of {@code kind} on both sides. */
    public void transferAndCheck(boolean write, long[] sizes, boolean sourcesApart, boolean destinationsApart,
                          MemoryKind kind) {
        transferAndCheck(write, sizes, sourcesApart, destinationsApart, kind, kind);
    }

    /** As above, with sources of {@code sourceKind} and destinations of {@code destinationKind}. */
    public void transferAndCheck(boolean write, long[] sizes, boolean sourcesApart, boolean destinationsApart,
                          MemoryKind sourceKind, MemoryKind destinationKind) {
        long total = 0;
        for (long s : sizes) {
            total += s;
        }
        long dstSize = total + CHECK_GUARD * (sizes.length + 1L);
        long srcBuf = randomBuffer(total);
        long dstBuf = poisoned(dstSize, CHECK_POISON);
        Engine srcOwner = write ? a : b;
        Engine dstOwner = write ? b : a;
        MemoryDescriptor srcRange = new MemoryDescriptor(srcBuf, total, sourceKind, 0);
        MemoryDescriptor dstRange = new MemoryDescriptor(dstBuf, dstSize, destinationKind, 0);
        srcOwner.register(srcRange);
        dstOwner.register(dstRange);
        a.loadRemoteMetadata("beta", new RegionMetadata("beta", write ? dstRange : srcRange).encode());
        List<MemoryDescriptor> src = new ArrayList<>();
        List<MemoryDescriptor> dst = new ArrayList<>();
        long[] srcAt = new long[sizes.length];
        long[] dstAt = new long[sizes.length];
        long so = 0;
        long dOff = CHECK_GUARD;
        for (int k = 0; k < sizes.length; k++) {
            int i = sourcesApart ? sizes.length - 1 - k : k;
            srcAt[i] = srcBuf + so;
            so += sizes[i];
            int j = destinationsApart ? sizes.length - 1 - k : k;
            dstAt[j] = dstBuf + dOff;
            dOff += sizes[j] + (destinationsApart ? CHECK_GUARD : 0);
        }
        for (int i = 0; i < sizes.length; i++) {
            src.add(new MemoryDescriptor(srcAt[i], sizes[i], sourceKind, 0));
            dst.add(new MemoryDescriptor(dstAt[i], sizes[i], destinationKind, 0));
        }
        byte[] note = "landed".getBytes(StandardCharsets.UTF_8);
        Transfer t = write ? a.session("beta").write(src, dst, note) : a.session("beta").read(dst, src, note);
        List<Notification> notes = new ArrayList<>();
        Engine notified = b;
        assertThat(pump(() -> {
            List<Notification> got = notified.drainNotifications();
            if (!got.isEmpty()) {
                assertThat(read(dstAt[0], sizes[0])).as("data before the notification")
                        .isEqualTo(read(srcAt[0], sizes[0]));
            }
            notes.addAll(got);
            return t.status().isTerminal() && !notes.isEmpty();
        })).as("transfer and notification").isTrue();
        assertThat(t.status()).isEqualTo(TransferStatus.DONE);
        for (int i = 0; i < sizes.length; i++) {
            assertThat(read(dstAt[i], sizes[i])).as("descriptor %d", i).isEqualTo(read(srcAt[i], sizes[i]));
            if (destinationsApart) {
                assertThat(read(dstAt[i] + sizes[i], CHECK_GUARD)).as("guard after descriptor %d", i)
                        .containsOnly(CHECK_POISON);
            }
        }
        assertThat(read(dstBuf, CHECK_GUARD)).as("guard before the first").containsOnly(CHECK_POISON);
        if (!destinationsApart) {
            assertThat(read(dstBuf + CHECK_GUARD + total, CHECK_GUARD)).as("guard after the last")
                    .containsOnly(CHECK_POISON);
        }
        pumpRounds(100);
        notes.addAll(notified.drainNotifications());
        assertThat(notes).containsExactly(new Notification("alpha", note));
    }

    @Override
    public void close() {
        a.close();
        b.close();
        ta.close();
        tb.close();
        fabric.close();
        for (long addr : buffers) {
            NativeMemory.free(addr);
        }
    }
}
