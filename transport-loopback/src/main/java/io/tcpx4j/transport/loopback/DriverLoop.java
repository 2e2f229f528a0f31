package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.idle.IdleSelector;
import io.tcpx4j.domain.port.out.DriverSelector;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;

/**
 * The loop of a transport without I/O threads: the thread that drives a listener, a connect or a comm moves
 * its bytes, inside its calls ({@link #posted}, {@link #drive}, {@link #poll}) and inside the handlers its
 * {@link DriverSelector} runs when a socket is ready. There is no hand-off between threads: the thread the
 * kernel wakes for a socket is the one that reads it.
 *
 * <p>Made without a driver selector (a caller of the transport that never blocks on one), the loop keeps
 * a selector of its own, which every call polls without blocking; it goes with the comm the listener or
 * connect made, or with them if they made none.
 *
 * <p><b>Not thread-safe</b>: confined to the driving thread, one at a time (the SPI's rule), except
 * {@link #release()} on close.
 */
final class DriverLoop implements Loop {

    private final DriverSelector driver;
    /** The selector of a loop made without a driver selector, which the loop polls itself; null otherwise. */
    private final IdleSelector own;

    /** A loop on {@code driver}'s selector, or, with null, on a selector of its own. */
    DriverLoop(DriverSelector driver) {
        this.own = driver == null ? new IdleSelector() : null;
        this.driver = driver != null ? driver : own;
    }

    @Override
    public SelectionKey register(SelectableChannel channel, int ops, Handler handler) throws IOException {
        SelectionKey key = driver.register(channel, ops, handler);
        if (key == null) {
            throw new ClosedChannelException();
        }
        return key;
    }

    @Override
    public boolean execute(Runnable task) {
        task.run();
        return true;
    }

    @Override
    public boolean runAndWait(Runnable task) {
        task.run();
        return true;
    }

    /** The driver's calls pump the comm; there is no pass over every comm. */
    @Override
    public void add(Pumpable p) {
    }

    @Override
    public void remove(Pumpable p) {
    }

    @Override
    public void posted(Pumpable comm) {
        comm.pumpAll();
    }

    @Override
    public void drive(Pumpable comm) {
        poll();
        comm.pumpAll();
    }

    /** A loop of its own runs its ready handlers now; on a driver's selector the driver polls or blocks on it. */
    @Override
    public void poll() {
        if (own != null) {
            own.poll();
        }
    }

    /** A staging copy is polled by the driver's next test of the request. */
    @Override
    public void pollSoon(long ticket) {
    }

    @Override
    public void signal() {
        driver.wake();
    }

    @Override
    public void release() {
        if (own != null) {
            own.close();
        }
    }
}
