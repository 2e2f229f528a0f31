package io.tcpx4j.domain.idle;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.DriverSelector;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The readiness of an agent's sockets (its control sockets and its listener), in one selector: its driver
 * blocks on it when it has nothing to do, woken early by {@link #wake()} (commands, transport
 * completions), and a duty cycle of an agent serving several connections polls it once ({@link #poll()})
 * rather than spend a read system call on every connection, most of which would find nothing. A watched
 * channel may carry a callback that learns it was ready. It is also the {@link DriverSelector} a transport
 * that moves its bytes on the driver's thread registers its sockets with.
 *
 * <p>{@link #wake()} is thread-safe; everything else belongs to the agent's driver, one thread at a time
 * (it never polls while it blocks).
 */
public final class IdleSelector implements DriverSelector, AutoCloseable {

    private final Selector selector;
    private final Consumer<SelectionKey> onReady = key -> {
        Object a = key.attachment();
        if (a instanceof Runnable r) {
            r.run();
        } else if (a instanceof Handler h) {
            h.onReady(key);
        }
    };
    private volatile boolean waiting;
    private volatile boolean signaled;
    /** Waits that blocked in the selector; written by the driver, read from any thread. */
    private volatile long blocks;

    public IdleSelector() {
        selector = openSelector();
    }

    /** A new selector; BACKEND if the system has none to give (descriptors exhausted). */
    public static Selector openSelector() {
        try {
            return Selector.open();
        } catch (IOException e) {
            throw new TransferException(Code.BACKEND, "cannot open a selector: " + e.getMessage(), e);
        }
    }

    /**
     * Watches {@code channel} for {@code ops}, running {@code onReady} (may be null) on the driver's thread
     * when a wait ends with it ready; returns the key, or null if the channel is closed already.
     */
    public SelectionKey watch(SelectableChannel channel, int ops, Runnable onReady) {
        try {
            return channel.register(selector, ops, onReady);
        } catch (ClosedChannelException e) {
            return null;
        }
    }

    @Override
    public SelectionKey register(SelectableChannel channel, int ops, Handler handler) {
        try {
            return channel.register(selector, ops, handler);
        } catch (ClosedChannelException e) {
            return null;
        }
    }

    /**
     * Blocks up to {@code timeoutMillis} unless a watched channel is ready or {@link #wake()} is called.
     * A wake since the last wait, or {@code stillIdle} turning false (checked after announcing the wait,
     * so a wake racing with the decision to block is never lost), skips the block.
     */
    public void await(long timeoutMillis, BooleanSupplier stillIdle) {
        waiting = true;
        try {
            if (!signaled && stillIdle.getAsBoolean()) {
                blocks++;
                selector.select(onReady, Math.max(1, timeoutMillis));
            }
        } catch (IOException e) {
            throw new TransferException(Code.BACKEND, "selector failed: " + e.getMessage(), e);
        } finally {
            waiting = false;
            signaled = false;
        }
    }

    /** Runs the callbacks of the watched channels that are ready now, without blocking; returns how many. */
    public int poll() {
        try {
            return selector.selectNow(onReady);
        } catch (IOException e) {
            throw new TransferException(Code.BACKEND, "selector failed: " + e.getMessage(), e);
        }
    }

    /** How many waits blocked in the selector so far. */
    public long blocks() {
        return blocks;
    }

    /** Ends a wait in progress, or skips the next one; cheap when nobody waits. */
    @Override
    public void wake() {
        signaled = true;
        if (waiting) {
            selector.wakeup();
        }
    }

    @Override
    public void close() {
        try {
            selector.close();
        } catch (IOException ignored) {
            // nothing else to release
        }
    }
}
