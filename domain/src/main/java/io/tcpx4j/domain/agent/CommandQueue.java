package io.tcpx4j.domain.agent;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;

/**
 * The way into the progress agent: application threads enqueue commands, the agent runs them at the
 * start of its next duty cycle and is woken at once if it waits.
 *
 * <p>Thread-safe.
 */
public final class CommandQueue implements Executor {

    private final String engineName;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private volatile Runnable wake = () -> { };
    private volatile boolean closed;

    public CommandQueue(String engineName) {
        this.engineName = engineName;
    }

    /** What wakes the agent when a command arrives (nothing when the agent is pumped by hand). */
    void wakeWith(Runnable w) {
        wake = w;
    }

    /** Enqueues {@code command} for the agent; CANCELED once the engine is closed. */
    @Override
    public void execute(Runnable command) {
        if (closed) {
            throw closedError();
        }
        commands.add(command);
        wake.run();
    }

    /** Runs every queued command on the calling (agent) thread; returns how many ran. */
    int runAll() {
        int n = 0;
        Runnable r;
        while ((r = commands.poll()) != null) {
            r.run();
            n++;
        }
        return n;
    }

    /** Runs what is left while closing; a failing command does not stop the others. */
    void drainOnClose() {
        Runnable r;
        while ((r = commands.poll()) != null) {
            try {
                r.run();
            } catch (RuntimeException ignored) {
                // closing anyway
            }
        }
    }

    public void close() {
        closed = true;
    }

    boolean isEmpty() {
        return commands.isEmpty();
    }

    boolean isClosed() {
        return closed;
    }

    /** Throws CANCELED if the engine is closed. */
    public void checkOpen() {
        if (closed) {
            throw closedError();
        }
    }

    private TransferException closedError() {
        return new TransferException(Code.CANCELED, "engine " + engineName + " is closed");
    }
}
