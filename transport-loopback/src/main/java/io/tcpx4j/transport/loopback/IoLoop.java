package io.tcpx4j.transport.loopback;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * One I/O thread: a selector over the sockets of the comms it owns, a task queue for set-up and
 * tear-down, and a pump pass over every owned comm per turn. All socket I/O and all state a comm's
 * streams touch happen on this thread, which is why a request never completes inside a call that posts
 * or tests it. Between turns the thread blocks in the selector until a socket is ready or {@link #wake}
 * is called, so the kernel wakes it for the bytes it handles.
 *
 * <p>Thread-safe entry points: {@link #execute}, {@link #wake}, {@link #shutdown}. Everything else is
 * <b>confined to the loop thread</b>.
 */
final class IoLoop implements Loop, Runnable {

    private static final System.Logger LOG = System.getLogger(IoLoop.class.getName());
    /**
     * How long a caller waits for the loop to run a task it needs done before it goes on (a close), or to
     * stop: bounded, because a loop stuck in a socket call must not hang the caller's close.
     */
    static final long WAIT_MILLIS = 5_000;

    private final Selector selector;
    private final Thread thread;
    /** The wake-ups of the engines using the transport, told of every completion, failure and set-up. */
    private final ProgressWakes wakes;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean wakePending = new AtomicBoolean();
    private final ArrayList<Pumpable> pumpables = new ArrayList<>();
    private final Consumer<SelectionKey> onKey = this::onKey;
    private volatile boolean running = true;
    private boolean pollSoon;
    /** The staging copy the last pump pass found unfinished, and when the loop began waiting for it. */
    private long pollTicket;
    private long waitTicket;
    private long waitStart;

    /*
     * A finished CUDA copy raises no socket event, so a loop waiting for one must poll, and at a fine
     * grain: the staging copy of one chunk is much shorter than a millisecond, select's finest wait, so
     * waiting in select would leave the socket idle for far longer than the copy. It polls every
     * STAGING_POLL_NANOS, yielding in between (each poll is a cuEventQuery under the device memory's lock,
     * which the agent needs to start the next copy: 16 loops polling flat out would starve it), for
     * STAGING_YIELD_NANOS, which covers a copy queued behind a few others on the GPU's copy stream; then
     * it parks in short steps (STAGING_PARK_NANOS, which Linux stretches to the thread's timer slack, 50 us
     * by default), still checking sockets between them. Only GPU hosts ever wait here: host sources need
     * no staging.
     */
    private static final long STAGING_YIELD_NANOS = 200_000L;
    private static final long STAGING_POLL_NANOS = 5_000L;
    private static final long STAGING_PARK_NANOS = 10_000L;

    IoLoop(String name, ProgressWakes wakes) {
        this.wakes = wakes;
        try {
            selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        thread = new Thread(this, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public SelectionKey register(SelectableChannel channel, int ops, Handler handler) throws IOException {
        return channel.register(selector, ops, handler);
    }

    /** Runs a task on the loop thread soon. Returns false if the loop has stopped. */
    @Override
    public boolean execute(Runnable task) {
        if (!running) {
            return false;
        }
        tasks.add(task);
        wake();
        return true;
    }

    /**
     * Runs {@code task} on the loop thread and waits for it, at most {@link #WAIT_MILLIS}. True once it ran,
     * or once the loop has stopped (closing every socket it had on its way out); false if the wait ran out.
     */
    @Override
    public boolean runAndWait(Runnable task) {
        CountDownLatch done = new CountDownLatch(1);
        if (!execute(() -> {
            task.run();
            done.countDown();
        })) {
            return true;
        }
        try {
            return done.await(WAIT_MILLIS, TimeUnit.MILLISECONDS) || !running;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !running;
        }
    }

    /** The posting thread hands the request to this loop's pump pass. */
    @Override
    public void posted(Pumpable comm) {
        wake();
    }

    /** The loop thread moves the comm's bytes; the caller only reads what it marked. */
    @Override
    public void drive(Pumpable comm) {
    }

    @Override
    public void poll() {
    }

    @Override
    public void signal() {
        wakes.signal();
    }

    /** The loop serves the transport's other sockets and stops with the transport. */
    @Override
    public void release() {
    }

    /** Makes the loop run a pump pass soon; allocation-free, so the data path may call it per request. */
    void wake() {
        if (wakePending.compareAndSet(false, true)) {
            selector.wakeup();
            LockSupport.unpark(thread); // in case it is parked waiting for a staging copy
        }
    }

    /**
     * Loop thread: a request waits for the staging copy behind {@code ticket}, which raises no event
     * when it finishes; the next turn polls the sockets without blocking instead of waiting in select.
     */
    @Override
    public void pollSoon(long ticket) {
        pollSoon = true;
        pollTicket = ticket;
    }

    @Override
    public void add(Pumpable p) {
        pumpables.add(p);
    }

    @Override
    public void remove(Pumpable p) {
        pumpables.remove(p);
    }

    @Override
    public void run() {
        try {
            while (running) {
                boolean soon = pollSoon;
                pollSoon = false;
                if (soon) {
                    awaitStaging();
                } else if (wakePending.get()) {
                    selector.selectNow(onKey);
                } else {
                    waitTicket = 0;
                    selector.select(onKey, 0);
                }
                // Cleared before the pump pass: a post after this point sets it again and wakes us.
                wakePending.set(false);
                runTasksAndPumps();
            }
        } catch (IOException | RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, "I/O loop " + thread.getName() + " died", e);
        } finally {
            running = false;
            for (Runnable t; (t = tasks.poll()) != null; ) {
                t.run(); // close tasks count down their latches; sockets are closed below anyway
            }
            for (SelectionKey key : selector.keys()) {
                try {
                    key.channel().close();
                } catch (IOException ignored) {
                    // closing everything on the way out; nothing to report to
                }
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // as above
            }
        }
    }

    /** The rest of a turn: queued tasks, then one pump of every pumpable. */
    private void runTasksAndPumps() {
        for (Runnable t; (t = tasks.poll()) != null; ) {
            t.run();
        }
        for (int i = 0; i < pumpables.size(); ) {
            Pumpable p = pumpables.get(i);
            try {
                p.pump();
            } catch (RuntimeException e) {
                p.crashed(e);
            }
            // a pump that failed its comm removed itself; then index i already holds the next one
            if (i < pumpables.size() && pumpables.get(i) == p) {
                i++;
            }
        }
    }

    /**
     * One turn of waiting for a staging copy: yield (or, once the same copy has kept us waiting a
     * while, park briefly), then poll the sockets.
     */
    private void awaitStaging() throws IOException {
        long now = System.nanoTime();
        if (pollTicket != waitTicket) {
            waitTicket = pollTicket;
            waitStart = now;
        }
        if (now - waitStart < STAGING_YIELD_NANOS) {
            long until = now + STAGING_POLL_NANOS;
            do {
                Thread.yield();
            } while (System.nanoTime() - until < 0 && !wakePending.get());
        } else {
            LockSupport.parkNanos(this, STAGING_PARK_NANOS);
        }
        selector.selectNow(onKey);
    }

    private void onKey(SelectionKey key) {
        if (key.attachment() instanceof Handler h) {
            h.onReady(key);
        }
    }

    /** Stops the loop and closes its sockets; waits a bounded time for the thread. */
    void shutdown() {
        running = false;
        selector.wakeup();
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(WAIT_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
