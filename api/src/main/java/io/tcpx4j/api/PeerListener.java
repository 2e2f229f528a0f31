package io.tcpx4j.api;

/**
 * Hears when peers connect to an engine and when they go ({@link TransferEngine#addPeerListener}), with the
 * counters of each ({@link PeerStats}): for meters that appear with a peer and go with it.
 *
 * <p>For each peer the calls alternate, starting with {@link #connected}: a peer that reconnects is
 * connected again, with the same counters unless the engine forgot the peer meanwhile ({@link PeerStats}).
 * They run on the engine's path (the progress agent that serves
 * the peer, or the thread that adds the listener): they should return quickly and must not block on the
 * engine; an exception they throw is logged and the engine carries on.
 */
public interface PeerListener {

    /** {@code peer} has a connection up with the engine, and had none just before. */
    void connected(PeerStats peer);

    /** The last connection of {@code peer} with the engine closed; its counters keep their counts. */
    void disconnected(PeerStats peer);
}
