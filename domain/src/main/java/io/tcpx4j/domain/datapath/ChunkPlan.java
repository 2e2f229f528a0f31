package io.tcpx4j.domain.datapath;

import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.transfer.Packing;

/**
 * The chunk sequence of one announced transfer in one direction. Both ends derive the same sequence from
 * the same lengths, chunk size and {@link Packing}, which is what lets the data sender be the only
 * ordering authority:
 * <ul>
 *   <li>a <em>packed</em> chunk carries a run of at least two consecutive descriptors, each of at most
 *       {@code pack} bytes, back to back, as many as fit in {@code packedChunk} bytes (the sender
 *       gathers them into a staging buffer, the receiver scatters them out of one);</li>
 *   <li>any other descriptor splits into chunks of {@code chunkSize} bytes (the last one shorter).</li>
 * </ul>
 * Descriptors stay in order; zero-length ones contribute nothing. {@code pack} 0 packs nothing.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
class ChunkPlan {

    final long xferId;
    final long[] addresses;
    final long[] lengths;
    final LocalRegion[] regions;
    final int chunkSize;
    /** Largest descriptor packed with others into one chunk; 0: none. */
    final int pack;
    /** Most bytes of a packed chunk. */
    final int packedChunk;
    final long chunks;
    /** The bytes of all descriptors. */
    final long bytes;
    /** Whether the chunks are drained into a discard buffer instead of this plan's regions. */
    private final boolean discards;

    // cursor of the next chunk to post
    private int desc;
    private long offset;
    /** End (exclusive) of the packed run starting at {@code desc}, or -1 if the next chunk is not packed. */
    private int runEnd;
    private int runBytes;
    private long posted;
    private long completed;

    ChunkPlan(long xferId, long[] addresses, long[] lengths, LocalRegion[] regions, int chunkSize) {
        this(xferId, addresses, lengths, regions, chunkSize, Packing.NONE, false);
    }

    /** {@code packing}: its chunks and limit are capped at {@code chunkSize} ({@link Packing#cappedAt}). */
    ChunkPlan(long xferId, long[] addresses, long[] lengths, LocalRegion[] regions, int chunkSize, Packing packing,
              boolean discards) {
        this.discards = discards;
        this.xferId = xferId;
        this.addresses = addresses;
        this.lengths = lengths;
        this.regions = regions;
        this.chunkSize = chunkSize;
        Packing capped = packing.cappedAt(chunkSize);
        this.pack = capped.limit();
        this.packedChunk = capped.chunk();
        this.chunks = countChunks(lengths, chunkSize, capped);
        this.bytes = total(lengths);
        skipEmpty();
    }

    /** The sum of {@code lengths}. */
    static long total(long[] lengths) {
        long total = 0;
        for (long l : lengths) {
            total += l;
        }
        return total;
    }

    /** Smallest chunk {@link #spreadChunk} makes. */
    static final int SPREAD_FLOOR = 128 * 1024;

    /**
     * The chunk size a data sender announces for a transfer of {@code lengths} over {@code channels}
     * channels that have no other chunk waiting (TransferProtocol asks only then). Chunks go to the channels in
     * turn, so a transfer whose chunk count is not a multiple of the channel count, or whose chunks
     * differ in size, loads one channel more than another. Such a transfer is cut into equal chunks, a
     * whole number per channel (its total over the chunk count rounded up to whole rounds, a multiple of
     * 4 KiB, at least {@link #SPREAD_FLOOR}), where that takes no more chunks than those rounds: on two
     * channels a lone 256 KiB descriptor goes as two 128 KiB chunks side by side instead of one chunk on
     * one channel, 600 KiB as 300 + 300 instead of 512 + 88, 1.5 MiB as four of 384 KiB instead of three
     * of 512 with two on one channel. Below the floor the per-chunk work outweighs the spread. Descriptors that
     * would split into more pieces at the smaller size keep {@code chunkSize}. {@code packing} is the
     * transfer's; a plan caps it at the chunk size.
     */
    static int spreadChunk(long[] lengths, int chunkSize, Packing packing, int channels) {
        long n = countChunks(lengths, chunkSize, packing);
        if (channels < 2 || n == 0) {
            return chunkSize;
        }
        long target = (n + channels - 1) / channels * channels; // whole rounds over the channels
        long total = 0;
        long longest = 0;
        for (long len : lengths) {
            total += len;
            longest = Math.max(longest, len);
        }
        long share = ((total + target - 1) / target + 4095) & ~4095L;
        if (share >= chunkSize) {
            return chunkSize; // full chunks already fill whole rounds
        }
        int chunk = (int) Math.max(SPREAD_FLOOR, share);
        boolean same = longest <= chunk && packing.chunk() <= chunk; // the same chunks either way
        if (chunk >= chunkSize || same || countChunks(lengths, chunk, packing.cappedAt(chunk)) > target) {
            return chunkSize;
        }
        return chunk;
    }

    static long countChunks(long[] lengths, int chunkSize, Packing packing) {
        long n = 0;
        int d = 0;
        while (d < lengths.length) {
            int end = runEnd(lengths, d, packing.limit(), packing.chunk());
            if (end > 0) {
                n++;
                d = end;
            } else {
                n += (lengths[d] + chunkSize - 1) / chunkSize;
                d++;
            }
        }
        return n;
    }

    /**
     * End (exclusive) of the packed run that starts at descriptor {@code from}: the descriptors from it on
     * of at most {@code pack} bytes (zero-length ones included) whose sum fits in {@code cap} bytes. -1
     * if that run holds fewer than two non-empty descriptors (its first descriptor travels on its own).
     */
    static int runEnd(long[] lengths, int from, int pack, int cap) {
        if (pack == 0 || lengths[from] == 0 || lengths[from] > pack) {
            return -1;
        }
        long total = 0;
        int members = 0;
        int j = from;
        while (j < lengths.length) {
            long len = lengths[j];
            if (len > pack || total + len > cap) {
                break;
            }
            total += len;
            if (len > 0) {
                members++;
            }
            j++;
        }
        return members >= 2 ? j : -1;
    }

    final boolean hasNext() {
        return desc < lengths.length;
    }

    /** Descriptor index of the next chunk (the first of its run if it is packed). */
    final int nextDesc() {
        return desc;
    }

    /** Whether the next chunk is packed: descriptors {@link #nextDesc()} .. {@link #nextRunEnd()} back to back. */
    final boolean nextPacked() {
        return runEnd > 0;
    }

    /** End (exclusive) of the next chunk's run; only if {@link #nextPacked()}. */
    final int nextRunEnd() {
        return runEnd;
    }

    /** Address of the next chunk (its first descriptor's if packed). */
    final long nextAddress() {
        return addresses[desc] + offset;
    }

    /** Length of the next chunk. */
    final int nextLength() {
        return runEnd > 0 ? runBytes : (int) Math.min(chunkSize, lengths[desc] - offset);
    }

    final void advance() {
        posted++;
        if (runEnd > 0) {
            desc = runEnd;
            offset = 0;
            skipEmpty();
            return;
        }
        offset += nextLength();
        if (offset >= lengths[desc]) {
            desc++;
            offset = 0;
            skipEmpty();
        }
    }

    /** Moves past zero-length descriptors and finds out whether the chunk there is packed. */
    private void skipEmpty() {
        while (desc < lengths.length && lengths[desc] == 0) {
            desc++;
        }
        runEnd = desc < lengths.length ? runEnd(lengths, desc, pack, packedChunk) : -1;
        if (runEnd > 0) {
            long total = 0;
            for (int i = desc; i < runEnd; i++) {
                total += lengths[i];
            }
            runBytes = (int) total;
        }
    }

    /** Chunks posted so far. */
    final long posted() {
        return posted;
    }

    final boolean allCompleted() {
        return completed == chunks;
    }

    /** Counts one more chunk completed (a send tested done, a receive consumed); true if it was the last. */
    final boolean chunkCompleted() {
        return ++completed == chunks;
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
