package io.tcpx4j.domain;

import io.tcpx4j.api.Notification;
import io.tcpx4j.domain.log.RateLimitedLog;

import java.lang.System.Logger.Level;
import java.util.AbstractQueue;
import java.util.Iterator;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * Where an engine's notifications arrive: queued for {@code drainNotifications()}, or handed to the
 * application's listener once it has one ({@code TransferEngine.onNotification}). The agents and the local
 * session offer to it as to any queue; what they offer goes to the listener on their thread.
 *
 * <p>Setting a listener hands it the queued notifications first, on the setting thread, while offers wait;
 * so one producer's notifications (a peer's, which one agent receives) reach the listener in order, each
 * once, and none is both drained and delivered. A listener's exception is logged (at most one record per
 * interval) and the producer carries on.
 *
 * <p>Thread-safe.
 */
final class NotificationInbox extends AbstractQueue<Notification> {

    private final ConcurrentLinkedQueue<Notification> queued = new ConcurrentLinkedQueue<>();
    /** Held while a listener is set (and the queue handed to it), and by offers that found none. */
    private final Object handover = new Object();
    private volatile Consumer<Notification> listener;
    private final RateLimitedLog listenerFailures = new RateLimitedLog(System.getLogger(NotificationInbox.class.getName()));

    /** Delivers to the listener if there is one, else queues. */
    @Override
    public boolean offer(Notification n) {
        Objects.requireNonNull(n, "notification");
        Consumer<Notification> l = listener;
        if (l == null) {
            synchronized (handover) {
                l = listener;
                if (l == null) {
                    return queued.offer(n);
                }
            }
        }
        deliver(l, n);
        return true;
    }

    /** From now on {@code l} takes every notification (the queued ones first); null: queue again. */
    void listen(Consumer<Notification> l) {
        synchronized (handover) {
            if (l != null) {
                Notification n;
                while ((n = queued.poll()) != null) {
                    deliver(l, n);
                }
            }
            listener = l;
        }
    }

    private void deliver(Consumer<Notification> l, Notification n) {
        try {
            l.accept(n);
        } catch (RuntimeException e) {
            listenerFailures.log(Level.WARNING, "notification listener failed on " + n, e);
        }
    }

    @Override
    public Notification poll() {
        return queued.poll();
    }

    @Override
    public Notification peek() {
        return queued.peek();
    }

    @Override
    public int size() {
        return queued.size();
    }

    @Override
    public Iterator<Notification> iterator() {
        return queued.iterator();
    }
}
