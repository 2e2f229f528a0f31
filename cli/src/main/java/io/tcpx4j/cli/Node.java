package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.warmup.WarmUp;
import io.tcpx4j.inject.EngineLifecycle;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.ProvisionException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * One started engine with its adapters, its memory ({@link BenchMemory}: allocation, pattern fill and
 * verify), and waiting for a given notification.
 *
 * <p>Thread-safe for the engine calls; {@link #awaitNotification} and {@link #close} are meant for
 * one owning thread.
 */
final class Node implements AutoCloseable {

    private final TransferEngine engine;
    /** What transfers go through: the engine, or its metered decorator under --metrics-port. */
    private final TransferEngine api;
    /** The engine's meters (removed at close) and the command's endpoint (released at close), or null. */
    private final CliMetrics.Metered metered;
    private final CliMetrics metrics;
    private final EngineLifecycle lifecycle;
    private final BenchMemory memory;
    private final int channels;
    private final List<Notification> unmatched = new ArrayList<>();
    private boolean closed;

    private Node(TransferEngine engine, CliMetrics metrics, EngineLifecycle lifecycle, BenchMemory memory,
                 int channels) {
        this.engine = engine;
        this.channels = channels;
        this.metrics = metrics;
        this.metered = metrics == null ? null : metrics.engine(engine);
        this.api = metered == null ? engine : metered.engine();
        this.lifecycle = lifecycle;
        this.memory = memory;
    }

    /**
     * Composes the engine (one injector: {@code EngineModule} and the transport module
     * {@link Backends} picks), and starts its progress thread.
     *
     * @throws Unavailable when the transport cannot start on this host (e.g. no TCPX plugin)
     */
    static Node start(EngineConfig config, Backends.Spec spec) {
        CliMetrics metrics = spec.metrics();
        if (metrics == null) {
            return compose(config, spec);
        }
        metrics.acquire();
        try {
            return compose(config, spec);
        } catch (RuntimeException | Error e) {
            metrics.release();
            throw e;
        }
    }

    private static Node compose(EngineConfig config, Backends.Spec spec) {
        Injector injector = Guice.createInjector(Backends.compose(config, spec));
        EngineLifecycle lifecycle;
        try {
            lifecycle = injector.getInstance(EngineLifecycle.class);
        } catch (ProvisionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            if (cause instanceof TransferException t) {
                // no plugin, or its init failed: this host cannot run the transport, like a missing module
                throw new Unavailable("--transport " + spec.transport().label() + " is not available on this host: "
                        + t.getMessage() + " (run 'tcpx4j doctor --transport " + spec.transport().label() + "')");
            }
            throw e;
        }
        TransferEngine engine;
        try {
            engine = lifecycle.start();
        } catch (RuntimeException e) {
            lifecycle.stop();
            if (e instanceof TransferException t && t.getCause() instanceof java.net.BindException b) {
                // the engine's control listener takes any free port: name the host the user chose
                throw new TransferException(t.code(), "the engine cannot listen on " + config.listenHost()
                        + " (any free port; the host comes from --bind, else --listen or the route to --peer): "
                        + b.getMessage(), t);
            }
            throw e;
        }
        awaitWarmUp(lifecycle);
        // metered from here on: the warm-up's private engines are not this engine
        return new Node(engine, spec.metrics(), lifecycle,
                new BenchMemory(injector.getInstance(DeviceMemory.class), spec.memory()), config.channels());
    }

    /**
     * Waits for the engine's warm-up (bounded by {@link WarmUp#MAX_TIME}), so that what this node serves or
     * measures does not share the CPUs with it.
     */
    private static void awaitWarmUp(EngineLifecycle lifecycle) {
        WarmUp w = lifecycle.warmUp();
        if (w == null) {
            return;
        }
        try {
            w.await(WarmUp.MAX_TIME.plusSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The engine to post through (metered under --metrics-port). */
    TransferEngine engine() {
        return api;
    }

    MemoryKind kind() {
        return memory.kind();
    }

    /** The data channels this engine offers a peer (a connection runs on the fewer of both sides'). */
    int channels() {
        return channels;
    }

    /** This node's memory: allocation and the pattern of {@code --check-consistency}. */
    BenchMemory memory() {
        return memory;
    }

    /**
     * Waits until a notification with exactly {@code message} has arrived (from any agent) and takes
     * it. Other notifications are kept for later calls. Returns false on timeout.
     */
    boolean awaitNotification(byte[] message, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            unmatched.addAll(engine.drainNotifications());
            for (Iterator<Notification> it = unmatched.iterator(); it.hasNext(); ) {
                if (Arrays.equals(it.next().message(), message)) {
                    it.remove();
                    return true;
                }
            }
            if (unmatched.size() > 10_000) {
                unmatched.subList(0, unmatched.size() - 1000).clear();
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(50_000);
        }
    }

    /**
     * Waits up to {@code timeout} until no transfer is live in the engine, so that memory can be
     * freed safely. Returns whether it drained.
     */
    boolean awaitQuiet(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (engine.stats().liveOperations() > 0) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(1_000_000);
        }
        return true;
    }

    /** Closes the engine, then the transport, unpacker and device memory. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (metered != null) {
                metered.close();
            }
            lifecycle.stop();
        } finally {
            if (metrics != null) {
                metrics.release();
            }
        }
    }
}
