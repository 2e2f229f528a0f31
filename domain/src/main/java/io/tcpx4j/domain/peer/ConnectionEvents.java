package io.tcpx4j.domain.peer;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.datapath.PeerTraffic;

/**
 * What a connection reports to the engine's peer directory, and the one question it asks. Each
 * connection has its own instance, so no call needs to say which connection it is about.
 *
 * <p>Called on the engine's agent thread only.
 */
interface ConnectionEvents {

    /**
     * An authenticated HELLO from {@code name}: null if this connection becomes the connection to that
     * peer, else why not (a crossing connection dialed by this engine wins; the peer dialed an agent
     * that does not serve it).
     */
    Handshake.Refusal admit(String name, long peerIncarnation);

    /** The counts of what the peer does in this engine's memory; asked once the peer is known (dialed or admitted). */
    PeerTraffic traffic();

    /** The connection is up: work queued for the peer may start on it. */
    void established();

    /** A notification for this engine arrived from the peer. */
    void deliver(byte[] message);

    /** The peer keeps a crossing connection it dialed; this one closed before it carried anything. */
    void crossingLost();

    /**
     * The connection closed and can be dropped. {@code reason} is what its transfers failed with, or null
     * when it closed before it belonged to a peer (refused, abandoned).
     */
    void closed(TransferException reason);
}
