package io.tcpx4j.it.transfer;

import com.google.inject.Guice;
import com.google.inject.Injector;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.inject.EngineLifecycle;
import io.tcpx4j.inject.EngineModule;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransportModule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One engine as an application composes it (EngineModule beside LoopbackTransportModule, started by
 * its EngineLifecycle), plus the native buffers it owns. Closing stops the engine, its transport and
 * frees the buffers.
 *
 * <p><b>Not thread-safe</b> for allocation; the engine itself is.
 */
public final class LoopbackNode implements AutoCloseable {

    /**
     * Engine settings for tests on shared CI machines: defaults, except a peer timeout long enough
     * that a box with a load average several times its core count does not declare a busy peer dead.
     */
    public static EngineConfig config(String name) {
        return EngineConfig.defaults(name).withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(30),
                Duration.ofSeconds(1));
    }

    private final EngineLifecycle lifecycle;
    private final List<Long> buffers = new ArrayList<>();
    public final TransferEngine engine;

    private LoopbackNode(EngineConfig config, LoopbackConfig transport) {
        Injector injector = Guice.createInjector(new EngineModule(config), new LoopbackTransportModule(transport));
        lifecycle = injector.getInstance(EngineLifecycle.class);
        engine = lifecycle.start();
    }

    /** Builds and starts an engine with its progress thread. */
    public static LoopbackNode start(EngineConfig config, LoopbackConfig transport) {
        return new LoopbackNode(config, transport);
    }

    public String name() {
        return engine.name();
    }

    /** A 4 KiB-aligned native buffer, freed on close. */
    public long allocate(long size) {
        long address = NativeMemory.allocate(size, NativeMemory.PAGE);
        buffers.add(address);
        return address;
    }

    /** Registers a DRAM range and returns its registration. */
    public RegisteredMemory register(long address, long length) {
        return engine.register(MemoryDescriptor.dram(address, length));
    }

    /** Makes {@code other} known to this engine and this engine known to {@code other}. */
    public void introduce(LoopbackNode other) {
        engine.loadPeer(other.name(), other.engine.connInfo());
        other.engine.loadPeer(name(), engine.connInfo());
    }

    @Override
    public void close() {
        try {
            lifecycle.stop();
        } finally {
            for (long b : buffers) {
                NativeMemory.free(b);
            }
            buffers.clear();
        }
    }
}
