package io.tcpx4j.domain;

import java.util.ArrayDeque;

/**
 * One direction of a connection's data stream: the plans whose chunks are still to be posted, in the
 * announced order, and the sequence number of the next chunk (chunk k travels on channel k mod C).
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class Lane {

    final boolean sends;
    final int window;
    final ArrayDeque<ChunkPlan> queue = new ArrayDeque<>();
    /** Buffers the lane's packed chunks travel through. */
    final StagingPool staging;
    long seq;
    /** {@code seq} mod C, counted along with it: no 64-bit division per chunk. */
    int channel;

    Lane(boolean sends, int window, StagingPool staging) {
        this.sends = sends;
        this.window = window;
        this.staging = staging;
    }

    /** This lane's ring on {@code ch}. */
    RequestRing ring(Channel ch) {
        return sends ? ch.tx : ch.rx;
    }
}
