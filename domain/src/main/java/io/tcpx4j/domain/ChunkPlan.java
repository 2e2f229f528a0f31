package io.tcpx4j.domain;

/**
 * The chunk sequence of one announced transfer in one direction: descriptor i splits into chunks of
 * {@code chunkSize} bytes (the last one shorter), descriptors in order, zero-length ones contribute
 * nothing. Both ends derive the same sequence from the same lengths and chunk size, which is what
 * lets the data sender be the only ordering authority.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
class ChunkPlan {

    final long xferId;
    final long[] addresses;
    final long[] lengths;
    final LocalRegion[] regions;
    final int chunkSize;
    final long chunks;
    /** Whether the chunks are drained into a discard buffer instead of this plan's regions. */
    private final boolean discards;

    // cursor of the next chunk to post
    private int desc;
    private long offset;
    long posted;
    long completed;

    ChunkPlan(long xferId, long[] addresses, long[] lengths, LocalRegion[] regions, int chunkSize) {
        this(xferId, addresses, lengths, regions, chunkSize, false);
    }

    ChunkPlan(long xferId, long[] addresses, long[] lengths, LocalRegion[] regions, int chunkSize, boolean discards) {
        this.discards = discards;
        this.xferId = xferId;
        this.addresses = addresses;
        this.lengths = lengths;
        this.regions = regions;
        this.chunkSize = chunkSize;
        this.chunks = countChunks(lengths, chunkSize);
        skipEmpty();
    }

    static long countChunks(long[] lengths, int chunkSize) {
        long n = 0;
        for (long len : lengths) {
            n += (len + chunkSize - 1) / chunkSize;
        }
        return n;
    }

    final boolean hasNext() {
        return desc < lengths.length;
    }

    /** Descriptor index of the next chunk. */
    final int nextDesc() {
        return desc;
    }

    /** Address of the next chunk. */
    final long nextAddress() {
        return addresses[desc] + offset;
    }

    /** Length of the next chunk. */
    final int nextLength() {
        return (int) Math.min(chunkSize, lengths[desc] - offset);
    }

    final void advance() {
        offset += nextLength();
        posted++;
        if (offset >= lengths[desc]) {
            desc++;
            offset = 0;
            skipEmpty();
        }
    }

    private void skipEmpty() {
        while (desc < lengths.length && lengths[desc] == 0) {
            desc++;
        }
    }

    final boolean allCompleted() {
        return completed == chunks;
    }

    /** Whether the chunks are drained into a discard buffer instead of this plan's regions. */
    final boolean discards() {
        return discards;
    }

    /** Unpins every region this plan pinned. */
    final void releaseRegions() {
        LocalRegion.releaseAll(regions);
    }
}
