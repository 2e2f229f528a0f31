package io.tcpx4j.domain.lifecycle;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Progress;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.warmup.WarmUp;

import java.lang.System.Logger.Level;
import java.util.Objects;

/**
 * Starts and stops one engine and closes what it owns. {@link #stop()} closes, in order, the warm-up if one
 * still runs, the engine (failing transfers still in flight with CANCELED), the transport, the
 * scatter-gather and the device memory.
 *
 * <p>With {@link EngineConfig#warmUpTransfers()} above 0, {@link #start()} also starts a {@link WarmUp}: two
 * private engines of the same configuration, transport and memory that exchange transfers in the
 * background so the JIT has compiled the transfer paths before the application's first transfer.
 *
 * <p>Thread-safe. {@code start} once; {@code stop} is idempotent.
 */
public final class Lifecycle implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Lifecycle.class.getName());

    private final Engine engine;
    private final EngineConfig config;
    private final NetTransport transport;
    private final ScatterGather scatterGather;
    private final DeviceMemory memory;
    private final Clock clock;
    private boolean started;
    private boolean stopped;
    private WarmUp warmUp;

    /** The life of {@code engine}, built of {@code config} over the transport, scatter-gather and memory given. */
    public Lifecycle(Engine engine, EngineConfig config, NetTransport transport, ScatterGather scatterGather,
                     DeviceMemory memory, Clock clock) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.config = Objects.requireNonNull(config, "config");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.scatterGather = Objects.requireNonNull(scatterGather, "scatterGather");
        this.memory = Objects.requireNonNull(memory, "memory");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Binds the control listeners, starts the progress threads (where the configuration's progress says so)
     * and, if configured, the warm-up; returns the engine. Stopping the lifecycle, not closing the engine,
     * also closes the transport and memory.
     */
    public synchronized TransferEngine start() {
        if (stopped) {
            throw new IllegalStateException("already stopped");
        }
        if (!started) {
            engine.start();
            started = true;
            if (config.warmUpTransfers() > 0) {
                warmUp = startWarmUp();
            }
        }
        return engine;
    }

    /** The running or finished warm-up, or null when none was started. */
    public synchronized WarmUp warmUp() {
        return warmUp;
    }

    /** Two private engines beside this one, or null (logged) when the transport offers no memory to warm up with. */
    private WarmUp startWarmUp() {
        MemoryKind kind;
        if (transport.deviceCount() > 0 && transport.properties(0).supports(PtrType.HOST)) {
            kind = MemoryKind.DRAM;
        } else if (memory.hasDevices()) {
            kind = MemoryKind.VRAM;
        } else {
            LOG.log(Level.INFO, "no warm-up: the transport takes neither host memory nor a GPU's");
            return null;
        }
        // each private engine drives a scatter-gather of its own: one is driven by one agent thread at a time
        ScatterGather forInitiator = null;
        ScatterGather forTarget;
        try {
            forInitiator = scatterGather.another();
            forTarget = scatterGather.another();
        } catch (RuntimeException e) {
            if (forInitiator != null) {
                forInitiator.close();
            }
            LOG.log(Level.INFO, "no warm-up: the scatter-gather serves one progress agent only: " + e.getMessage());
            return null;
        }
        EngineConfig base = config.withListen(config.listenHost(), 0).withAgents(1);
        // the warm-up's thread drives its initiator as the application would (driveUntilEnded); nothing
        // drives the private target but a thread of its own, whichever driver the application chose
        EngineConfig initiatorConfig = base.withName(config.name() + "/warm-up-initiator");
        EngineConfig targetConfig = base.withName(config.name() + "/warm-up-target")
                .withProgress(base.progress().withDriver(Progress.Driver.THREAD));
        Engine initiator = new Engine(io.tcpx4j.domain.EngineConfig.from(initiatorConfig), transport, memory,
                forInitiator, clock);
        Engine target = new Engine(io.tcpx4j.domain.EngineConfig.from(targetConfig), transport, memory, forTarget,
                clock);
        try {
            initiator.start();
            target.start();
        } catch (RuntimeException e) {
            initiator.close();
            target.close();
            forInitiator.close();
            forTarget.close();
            LOG.log(Level.INFO, "no warm-up: its engines did not start: " + e);
            return null;
        }
        return WarmUp.start(initiator, target, memory, kind, 0, config.warmUpTransfers(), forInitiator, forTarget);
    }

    /** Closes the warm-up if it still runs, the engine, the transport, the scatter-gather and the memory. */
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            if (warmUp != null) {
                warmUp.close();
            }
            engine.close();
        } finally {
            try {
                transport.close();
            } finally {
                try {
                    scatterGather.close();
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
