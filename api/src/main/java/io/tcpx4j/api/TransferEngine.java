package io.tcpx4j.api;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

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
     * Hands every notification to {@code listener} instead of queueing it for {@link #drainNotifications()};
     * {@code null} goes back to queueing. Notifications queued before the call are handed to the listener
     * first, in the order they came, on the calling thread; later ones on the thread that received them: the
     * progress agent that serves the sending peer (with {@link Progress.Driver#CALLER}, the application thread
     * driving it), or, for notifications an engine sends itself, the thread that posted them. Each
     * notification reaches the listener once and is not drained as well; notifications of one peer arrive in
     * the order they were sent. Where several threads receive (several agents, posts to the engine itself)
     * the listener may run on them at once. A notification that arrives while the listener is being replaced
     * may still reach the one replaced.
     *
     * <p>The listener runs on the engine's path: it should return quickly and must not block on the engine
     * (close it, await transfers). An exception it throws is logged and the engine carries on.
     */
    void onNotification(Consumer<Notification> listener);

    /** A snapshot of the engine's counters. Never blocks. */
    EngineStats stats();

    /**
     * The counters of what each peer did in this engine's memory ({@link PeerStats}: live views), one per peer
     * the engine knows (loaded, or admitted when it connected, until it forgets a peer it only admitted once
     * that peer has gone), in the order the engine came to know them; an unmodifiable list. Never blocks. The default keeps no such counters: an empty list.
     */
    default List<PeerStats> peerStats() {
        return List.of();
    }

    /**
     * Tells {@code listener} of every peer connected to this engine now ({@link PeerListener#connected}, on the
     * calling thread), then of each peer as its connection comes up or its last one closes (on the progress
     * agent that serves the peer), until {@link #removePeerListener} removes it. Several listeners may listen.
     * The default does nothing.
     */
    default void addPeerListener(PeerListener listener) {
    }

    /** Stops telling {@code listener}; a listener not added is ignored. The default does nothing. */
    default void removePeerListener(PeerListener listener) {
    }

    /**
     * Where the application's threads drive the engine (its progress setting is {@code CALLER}): runs one
     * step of its progress work (protocol steps, transport polls) on the calling thread, unless another
     * thread does so right now, and returns the amount of work done (0: nothing to do). Where the engine
     * has threads of its own (the default) it does nothing and returns 0. Never blocks. For hosts that
     * poll in a loop anyway (NIXL's {@code checkXfer}). The default does nothing.
     */
    default int progress() {
        return 0;
    }

    /**
     * Waits until {@code transfer} ends or {@code timeout} passes and returns its status
     * ({@code IN_PROGRESS} if the time ran out): {@link Transfer#await} without the checked interrupt (an
     * interrupt ends the wait and stays set on the thread). Where the application's threads drive the
     * engine, this thread drives it meanwhile, spinning briefly between steps and then blocking until the
     * kernel reports an event. Never throws for a failed transfer: look at {@link Transfer#error()}.
     */
    default TransferStatus driveUntilEnded(Transfer transfer, Duration timeout) {
        try {
            return transfer.await(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return transfer.status();
        }
    }

    /** Fails in-flight transfers with CANCELED, closes connections and frees transport resources. */
    @Override
    void close();
}
