package io.tcpx4j.domain.control;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.idle.IdleSelector;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * Which connections have control bytes to read, found with one {@code selectNow} per duty cycle: an
 * agent serving many peers would otherwise spend a read system call per connection per cycle, most of
 * them finding nothing. A selector
 * of its own rather than {@link IdleSelector}'s: that one is held by the agent thread while it blocks,
 * and a caller running a duty cycle meanwhile must not wait for it.
 *
 * <p><b>Not thread-safe</b>: used by whoever runs the duty cycle (registration and selection both
 * happen in cycles, one at a time).
 */
public final class ControlPoll implements AutoCloseable {

    private final Selector selector;
    private final Consumer<SelectionKey> onReady = key -> ((Runnable) key.attachment()).run();

    public ControlPoll() {
        selector = IdleSelector.openSelector();
    }

    /** Runs {@code onReadable} in the polls that find {@code channel} readable; a closed channel is skipped. */
    void watch(SocketChannel channel, Runnable onReadable) {
        try {
            channel.register(selector, SelectionKey.OP_READ, onReadable);
        } catch (ClosedChannelException e) {
            // the connection fails on its own next read
        }
    }

    /** Tells every watcher whose socket is readable (or at end of stream); returns how many. */
    public int poll() {
        try {
            return selector.selectNow(onReady);
        } catch (IOException e) {
            throw new TransferException(Code.BACKEND, "selector failed: " + e.getMessage(), e);
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
