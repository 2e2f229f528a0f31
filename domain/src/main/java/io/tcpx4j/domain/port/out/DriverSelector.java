package io.tcpx4j.domain.port.out;

import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;

/**
 * The kernel wait of the thread that drives a progress agent. A transport with
 * {@link Capability#DRIVER_SOCKETS} moves the bytes of the comms made with it inside that thread's calls,
 * and registers their sockets here, so that the driver, blocked in this selector while it waits for the
 * network, is woken by the kernel when one of them is ready: the thread the kernel wakes for a packet is
 * the one that handles it.
 *
 * <p>{@link #wake()} is thread-safe. {@link #register} and every {@link Handler} run on the driver's
 * thread, one at a time.
 */
public interface DriverSelector {

    /** What a registered socket runs when the driver's wait or poll finds it ready. */
    interface Handler {
        /** Runs on the driver's thread; must not throw (a handler fails what it serves instead). */
        void onReady(SelectionKey key);
    }

    /**
     * Registers {@code channel} for {@code ops} with {@code handler} as the key's attachment (an attachment
     * replaced later must be a {@link Handler} too, or null); returns the key, or null if the channel is
     * closed already.
     */
    SelectionKey register(SelectableChannel channel, int ops, Handler handler);

    /**
     * Ends the driver's wait, or skips its next one: something moved on that no socket announces (a request
     * completed inside a call). Any thread; cheap when nobody waits.
     */
    void wake();
}
