package io.tcpx4j.it.reliability;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.EngineStats;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * One engine in this JVM over its own loopback transport (as each process has its own TCPX plugin),
 * with counting wrappers around the transport and device memory, and the native buffers it owns.
 * Production wiring: a progress thread per engine, no manual pumping.
 *
 * <p>Thread-safe as far as the engine is; {@link #close()} from one thread.
 */
final class Node implements AutoCloseable {

    final String name;
    final CountingTransport transport;
    final CountingMemory memory = new CountingMemory();
    final Engine engine;
    private final List<long[]> buffers = new ArrayList<>();
    private final List<RegisteredMemory> registered = new ArrayList<>();
    private boolean closed;

    Node(EngineConfig config) {
        this(config, LoopbackConfig.defaults());
    }

    Node(EngineConfig config, LoopbackConfig loopback) {
        this.name = config.name();
        this.transport = new CountingTransport(new LoopbackTransport(loopback));
        this.engine = new Engine(io.tcpx4j.domain.EngineConfig.from(config), transport, memory, new CpuScatterGather(),
                Clock.SYSTEM);
        engine.start();
    }

    /** Fast failure detection for fault tests: peer timeout 2 s, heartbeat 250 ms, connect 10 s. */
    static EngineConfig config(String name) {
        return EngineConfig.defaults(name)
                .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(10), Duration.ofMillis(250))
                .withShutdownTimeout(Duration.ofSeconds(2));
    }

    synchronized long alloc(long size) {
        long addr = Buffers.allocate(size);
        buffers.add(new long[] {addr, size});
        return addr;
    }

    synchronized RegisteredMemory register(long addr, long size) {
        RegisteredMemory r = engine.register(MemoryDescriptor.dram(addr, size));
        registered.add(r);
        return r;
    }

    /** Allocates, fills from {@code seed}, registers. */
    RegisteredMemory randomRegion(long size, long seed) {
        long addr = alloc(size);
        Buffers.fillRandom(addr, size, seed);
        return register(addr, size);
    }

    /** Makes this node and {@code other} know each other (conn-info both ways). */
    void meet(Node other) {
        engine.loadPeer(other.name, other.engine.connInfo());
        other.engine.loadPeer(name, engine.connInfo());
    }

    /** Publishes {@code region} of this node to {@code other}. */
    void publish(RegisteredMemory region, Node other) {
        other.engine.loadRemoteMetadata(name, region.publicMetadata());
    }

    EngineStats stats() {
        return engine.stats();
    }

    static MemoryDescriptor dram(long addr, long len) {
        return MemoryDescriptor.dram(addr, len);
    }

    static TransferStatus await(Transfer t, Duration timeout) {
        try {
            return t.await(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Polls {@code condition} every 10 ms until it holds or {@code timeout} passes. */
    static boolean eventually(Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (RegisteredMemory r : registered) {
                r.close();
            }
            engine.close();
        } finally {
            transport.close();
            for (long[] b : buffers) {
                Buffers.free(b[0], b[1]);
            }
            buffers.clear();
        }
    }

    @Override
    public String toString() {
        return name + " " + stats() + " " + transport;
    }
}
