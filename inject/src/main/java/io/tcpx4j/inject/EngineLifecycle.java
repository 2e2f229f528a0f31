package io.tcpx4j.inject;

import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import jakarta.inject.Inject;

import java.util.Objects;

/**
 * Starts and stops the injector's engine and closes what it owns. {@link #stop()} closes, in order,
 * the engine (failing transfers still in flight with CANCELED), the transport, the unpacker and the
 * device memory.
 *
 * <p>Thread-safe. {@code start} once; {@code stop} is idempotent.
 */
public final class EngineLifecycle implements AutoCloseable {

    private final Engine engine;
    private final NetTransport transport;
    private final ScatterGather unpacker;
    private final DeviceMemory memory;
    private boolean started;
    private boolean stopped;

    @Inject
    public EngineLifecycle(Engine engine, NetTransport transport, ScatterGather unpacker, DeviceMemory memory) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.unpacker = Objects.requireNonNull(unpacker, "unpacker");
        this.memory = Objects.requireNonNull(memory, "memory");
    }

    /** Binds the control listener and starts the progress thread. */
    public synchronized Engine start() {
        if (stopped) {
            throw new IllegalStateException("already stopped");
        }
        if (!started) {
            engine.start();
            started = true;
        }
        return engine;
    }

    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            engine.close();
        } finally {
            try {
                transport.close();
            } finally {
                try {
                    unpacker.close();
                } finally {
                    memory.close();
                }
            }
        }
    }

    @Override
    public void close() {
        stop();
    }
}
