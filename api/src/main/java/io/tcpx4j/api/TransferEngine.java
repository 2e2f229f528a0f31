package io.tcpx4j.api;

import java.time.Duration;
import java.util.List;

/**
 * Moves memory between this process and named peers.
 *
 * <p>Typical use: register memory, publish {@link #connInfo()} and each region's
 * {@link RegisteredMemory#publicMetadata()} to peers out of band; on the other side call
 * {@link #loadPeer(String, byte[])} and {@link #loadRemoteMetadata(String, byte[])}, then
 * {@link #session(String)} and {@code write}/{@code read}.
 *
 * <p>Thread-safe. Only {@link #close()} blocks (bounded by the engine's shutdown timeout).
 */
public interface TransferEngine extends AutoCloseable {

    /** This engine's (agent's) name, unique among the peers it talks to. */
    String name();

    /** Registers memory for local use and remote access. */
    RegisteredMemory register(MemoryDescriptor memory);

    /**
     * A blob that lets a peer connect to this engine: its address and its connection secret. Treat
     * it like a password; give it only to peers that may access this engine's registered memory.
     */
    byte[] connInfo();

    /** Makes a peer known. Never blocks: connecting happens in the background. */
    void loadPeer(String name, byte[] connInfo);

    /** Adds a peer's registered region, as published by its {@code publicMetadata()}. */
    void loadRemoteMetadata(String peer, byte[] publicMetadata);

    /** Forgets a peer's region previously loaded. */
    void unloadRemoteMetadata(String peer, byte[] publicMetadata);

    /**
     * Starts connecting to a known peer if not connected yet. Never blocks. Transfers connect on
     * demand, so calling this is optional.
     */
    void connect(String peer);

    /** Closes the connection to a peer gracefully; its in-flight transfers fail with REMOTE_DISCONNECT. */
    void disconnect(String peer);

    /** A session with a loaded peer (or with {@link #name()} itself for local copies). */
    Session session(String peer);

    /**
     * Takes every notification received so far (oldest first); an empty, unmodifiable list when there
     * is none. Never blocks.
     */
    List<Notification> drainNotifications();

    /**
     * Lends the calling thread to the engine: runs its progress work (protocol steps, transport polls,
     * and the socket work of a transport with threads of its own, such as the loopback transport) for a
     * short while if no other thread is doing so right now, and returns the amount of work done (0:
     * nothing to do, or busy elsewhere). Never blocks. For hosts that poll for completion in a loop, so
     * their own thread moves the bytes even when the engine's threads get little CPU; those stand aside
     * while calls keep coming (for about a millisecond after each) and serve again when they stop. The
     * default does nothing.
     */
    default int progress() {
        return 0;
    }

    /**
     * Runs {@link #progress()} on the calling thread until {@code transfer} ends or {@code timeout}
     * passes, and returns its status ({@code IN_PROGRESS} if the time ran out): {@link Transfer#await}
     * with this thread moving the bytes instead of the engine's, as a host that polls for completion
     * does. Spins between calls that found nothing to do: one core busy while it waits. Never throws
     * for a failed transfer: look at {@link Transfer#error()}.
     */
    default TransferStatus driveUntilEnded(Transfer transfer, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int i = 1; transfer.status() == TransferStatus.IN_PROGRESS; i++) {
            if (progress() == 0) {
                Thread.onSpinWait();
            }
            if ((i & 1023) == 0 && System.nanoTime() - deadline > 0) {
                break;
            }
        }
        return transfer.status();
    }

    /** Fails in-flight transfers with CANCELED, closes connections and frees transport resources. */
    @Override
    void close();
}
