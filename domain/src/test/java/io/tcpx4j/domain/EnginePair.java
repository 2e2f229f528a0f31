package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.domain.memory.CpuUnpacker;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/**
 * Two engines over the strict in-memory transport double, pumped by hand. Owns its native buffers.
 */
final class EnginePair implements AutoCloseable {

    final InMemoryFabric fabric;
    final NetTransport ta;
    final NetTransport tb;
    final Engine a;
    final Engine b;
    private final List<Long> buffers = new ArrayList<>();
    final Random random = new Random(42);

    EnginePair() {
        this(EngineConfig.defaults("alpha"), EngineConfig.defaults("beta"));
    }

    EnginePair(EngineConfig ca, EngineConfig cb) {
        this(ca, cb, UnaryOperator.identity());
    }

    /** {@code wrap} may put a watching double around each engine's transport. */
    EnginePair(EngineConfig ca, EngineConfig cb, UnaryOperator<NetTransport> wrap) {
        fabric = new InMemoryFabric();
        ta = wrap.apply(fabric.newTransport());
        tb = wrap.apply(fabric.newTransport());
        a = new Engine(ca, ta, new HostMemory(), new CpuUnpacker(), Clock.SYSTEM);
        b = new Engine(cb, tb, new HostMemory(), new CpuUnpacker(), Clock.SYSTEM);
        a.startManual();
        b.startManual();
        a.loadPeer(b.name(), b.connInfo());
        b.loadPeer(a.name(), a.connInfo());
    }

    /** Pumps both engines until {@code done} or 20 s pass; returns whether it got done. */
    boolean pump(BooleanSupplier done) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            int w = a.doWork() + b.doWork();
            if (w == 0) {
                Thread.onSpinWait();
            }
        }
        return true;
    }

    /** Pumps a fixed number of rounds (to show that nothing more happens). */
    void pumpRounds(int rounds) {
        for (int i = 0; i < rounds; i++) {
            a.doWork();
            b.doWork();
        }
    }

    long alloc(long size) {
        long addr = NativeMemory.allocate(Math.max(size, 1), 4096);
        buffers.add(addr);
        return addr;
    }

    /** A buffer of {@code size} random bytes. */
    long randomBuffer(long size) {
        long addr = alloc(size);
        byte[] chunk = new byte[64 * 1024];
        for (long off = 0; off < size; off += chunk.length) {
            random.nextBytes(chunk);
            NativeMemory.put(addr + off, chunk, 0, (int) Math.min(chunk.length, size - off));
        }
        return addr;
    }

    /** A buffer filled with a poison byte. */
    long poisoned(long size, byte poison) {
        long addr = alloc(size);
        NativeMemory.fill(addr, Math.max(size, 1), poison);
        return addr;
    }

    static byte[] read(long addr, long size) {
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
