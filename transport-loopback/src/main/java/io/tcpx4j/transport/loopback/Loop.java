package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.port.out.DriverSelector;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;

/**
 * Where the sockets of a listener, a connect or a comm are watched and which thread moves their bytes:
 * one of the transport's I/O threads ({@link IoLoop}), or the thread that drives them, inside its calls
 * and its selector's handlers ({@link DriverLoop}). A comm stays on the loop of the listener or connect
 * that made it.
 */
interface Loop {

    /** Something that reacts to readiness of a key it attached itself to. */
    interface Handler extends DriverSelector.Handler {
        void ready(SelectionKey key);

        /** The handler threw; it must fail whatever it serves and let go of its sockets. */
        void crashed(RuntimeException e);

        /** Runs {@link #ready}, turning what it throws into {@link #crashed}: one socket's fault is its own. */
        @Override
        default void onReady(SelectionKey key) {
            if (!key.isValid()) {
                return;
            }
            try {
                ready(key);
            } catch (RuntimeException e) {
                crashed(e);
            }
        }
    }

    /** Something with work that may be ready without a socket event (posted requests, staging). */
    interface Pumpable {
        /** Moves the bytes of the sockets that do not wait for readiness. */
        void pump();

        /**
         * Moves every socket's bytes as far as the kernel takes them now, whether or not the socket last
         * waited for readiness (the driver's selector may not have been polled since it became ready).
         */
        void pumpAll();

        /** {@link #pump()} threw; fail what it serves and {@link #remove} it. */
        void crashed(RuntimeException e);
    }

    /** Watches {@code channel} for {@code ops}, {@code handler} attached; on the loop's thread. */
    SelectionKey register(SelectableChannel channel, int ops, Handler handler) throws IOException;

    /** Runs a task on the loop's thread: soon, or (driver) now. False if the loop has stopped. */
    boolean execute(Runnable task);

    /** Runs a task on the loop's thread and waits for it (bounded); true once it ran or the loop stopped. */
    boolean runAndWait(Runnable task);

    void add(Pumpable p);

    void remove(Pumpable p);

    /** Caller thread: a request was posted on {@code comm}. */
    void posted(Pumpable comm);

    /** Caller thread: the driver asks about {@code comm}'s requests; a driver loop moves its bytes now. */
    void drive(Pumpable comm);

    /** Caller thread: the driver asks about a connect or an accept; a driver loop runs what is ready now. */
    void poll();

    /** Loop thread: a request waits for the staging copy behind {@code ticket}, which raises no socket event. */
    void pollSoon(long ticket);

    /** Loop thread: a request completed, a comm failed, or a connect or accept became ready. */
    void signal();

    /** The comm or listener that owned this loop's sockets let them go; a loop of its own closes. */
    void release();
}
