package io.tcpx4j.api;

import java.util.Set;

/**
 * What one peer did in this engine's memory, counted by the engine as it serves the peer
 * ({@link TransferEngine#peerStats()}): the WRITEs the peer landed here, the READs this engine served it, and
 * the requests this engine refused it. The protocol is one-sided, so none of this passes through this
 * engine's own {@link Session}s; what this engine posts to the peer is not counted here.
 *
 * <p>A live view: each call reads the count as it is now. Counts start at zero when the engine comes to know
 * the peer and only grow, across the peer's reconnections, for as long as the engine knows it: a peer whose
 * conn-info or region metadata the engine loaded, for as long as the engine lives; a peer the engine knows only
 * because it connected, until its last connection closed and nothing waits for it. The engine then forgets
 * that peer: it leaves {@link TransferEngine#peerStats()}, this view keeps its last counts, and if the peer
 * connects again it has new counters that start at zero. A transfer counts
 * once it was served in full: a WRITE when its last byte landed (before the engine acknowledges it), a READ
 * when its last byte left (for a READ answered inline, when the answer was written); one that a broken
 * connection cut short does not count.
 *
 * <p>Thread-safe. Each count is read atomically; two counts read one after the other may belong to
 * different moments.
 */
public interface PeerStats {

    /**
     * The codes an engine refuses a peer's WRITE or READ with: NOT_ALLOWED, a range outside its registered
     * memory; NOT_SUPPORTED, packed chunks or inline bytes it cannot take.
     */
    Set<TransferException.Code> REFUSAL_CODES = Set.of(TransferException.Code.NOT_ALLOWED,
            TransferException.Code.NOT_SUPPORTED);

    /** The peer's name. */
    String peer();

    /** WRITEs of the peer whose every byte landed in this engine's memory. */
    long writes();

    /** The bytes of those WRITEs. */
    long bytesWritten();

    /** READs of this engine's memory whose every byte this engine sent the peer. */
    long reads();

    /** The bytes of those READs. */
    long bytesRead();

    /** WRITEs of the peer this engine refused with {@code code}; only {@link #REFUSAL_CODES} are ever counted. */
    long refusedWrites(TransferException.Code code);

    /** READs of the peer this engine refused with {@code code}; only {@link #REFUSAL_CODES} are ever counted. */
    long refusedReads(TransferException.Code code);
}
