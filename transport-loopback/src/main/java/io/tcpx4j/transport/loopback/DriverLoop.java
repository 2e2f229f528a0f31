package io.tcpx4j.transport.loopback;

import io.tcpx4j.domain.port.out.DriverSelector;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.function.Consumer;

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
    /** The selector of a loop made without a driver selector; null otherwise. */
    private final Selector own;
    private final Consumer<SelectionKey> onKey = key -> {
        if (key.attachment() instanceof Handler h) {
            h.onReady(key);
        }
    };

    /** A loop on {@code driver}'s selector, or, with null, on a selector of its own. */
    DriverLoop(DriverSelector driver) {
        if (driver != null) {
            this.driver = driver;
            this.own = null;
        } else {
            try {
                this.own = Selector.open();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            this.driver = null;
        }
    }

    @Override
    public SelectionKey register(SelectableChannel channel, int ops, Handler handler) throws IOException {
        if (own != null) {
            return channel.register(own, ops, handler);
        }
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

    @Override
    public void poll() {
        if (own == null) {
            return; // the driver polls or blocks on its selector between its calls
        }
        try {
            own.selectNow(onKey);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A staging copy is polled by the driver's next test of the request. */
    @Override
    public void pollSoon(long ticket) {
    }

    @Override
    public void signal() {
        if (driver != null) {
            driver.wake();
        }
    }

    @Override
    public void release() {
        if (own != null) {
            try {
                own.close();
            } catch (IOException ignored) {
                // the sockets were closed already; nothing else holds this selector
            }
        }
    }
}
