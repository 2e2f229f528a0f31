package io.tcpx4j.transport.loopback;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The wake-ups engines registered with {@link LoopbackTransport#wakeOnProgress}, and the signal that calls
 * them when a request completed, a comm failed, or a connect or accept became ready.
 *
 * <p>Thread-safe: {@link #signal()} from any thread reads a copy-on-write array, so that signalling
 * allocates nothing and takes no lock; adding and removing hold this object's monitor.
 */
final class ProgressWakes {

    private volatile Runnable[] wakes = new Runnable[0];

    /** Adds a wake-up; returns what removes it. */
    synchronized Runnable add(Runnable wake) {
        Objects.requireNonNull(wake, "wake");
        Runnable[] next = Arrays.copyOf(wakes, wakes.length + 1);
        next[wakes.length] = wake;
        wakes = next;
        return () -> remove(wake);
    }

    private synchronized void remove(Runnable wake) {
        List<Runnable> rest = new ArrayList<>(Arrays.asList(wakes));
        rest.remove(wake);
        wakes = rest.toArray(new Runnable[0]);
    }

    /** Any thread: something may have moved on. */
    void signal() {
        for (Runnable w : wakes) {
            w.run();
        }
    }
}
