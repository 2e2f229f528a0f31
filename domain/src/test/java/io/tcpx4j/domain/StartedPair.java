package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Progress;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;

import java.util.List;
import java.util.Random;

/**
 * Two engines, alpha and beta, over the in-memory transport double, with one host buffer each
 * (alpha's source, beta's registered and published destination). Started with their drivers, or bare
 * for tests that run the duty cycles themselves. Owns everything it made.
 */
final class StartedPair implements AutoCloseable {

    final int size;
    final InMemoryFabric fabric = new InMemoryFabric();
    final NetTransport ta = fabric.newTransport();
    final NetTransport tb = fabric.newTransport();
    final Engine a;
    final Engine b;
    final long src;
    final long dst;
    final MemoryDescriptor local;
    final MemoryDescriptor remote;
    private boolean closed;

    /** Both engines with {@code progress}; {@code start}: started as it says, else pumped by hand. */
    StartedPair(Progress progress, boolean start, int size) {
        this(progress, progress, start, size);
    }

    /** alpha with {@code pa}, beta with {@code pb}; {@code start}: started as they say, else pumped by hand. */
    StartedPair(Progress pa, Progress pb, boolean start, int size) {
        this.size = size;
        src = NativeMemory.allocate(size, 4096);
        dst = NativeMemory.allocate(size, 4096);
        local = MemoryDescriptor.dram(src, size);
        remote = MemoryDescriptor.dram(dst, size);
        a = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("alpha").withProgress(pa)), ta,
                new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        b = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("beta").withProgress(pb)), tb,
                new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        if (start) {
            a.start();
            b.start();
        } else {
            a.startManual();
            b.startManual();
        }
        a.loadPeer("beta", b.connInfo());
        b.loadPeer("alpha", a.connInfo());
        a.register(local);
        a.loadRemoteMetadata("beta", b.register(remote).publicMetadata());
    }

    /** Fills the source with bytes from {@code seed}, poisons the destination; returns the bytes. */
    byte[] fill(int seed) {
        byte[] data = new byte[size];
        new Random(seed).nextBytes(data);
        NativeMemory.put(src, data, 0, size);
        NativeMemory.fill(dst, size, (byte) 0x5A);
        return data;
    }

    byte[] received() {
        byte[] got = new byte[size];
        NativeMemory.get(dst, got, 0, size);
        return got;
    }

    /** alpha writes its whole source into beta's destination. */
    Transfer write(byte[] notification) {
        return a.session("beta").write(List.of(local), List.of(remote), notification);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        a.close();
        b.close();
        ta.close();
        tb.close();
        fabric.close();
        NativeMemory.free(src);
        NativeMemory.free(dst);
    }
}
