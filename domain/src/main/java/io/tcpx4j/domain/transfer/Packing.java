package io.tcpx4j.domain.transfer;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.EngineConfig;

/**
 * How one transfer packs small descriptors (the chunk plan of the data path): consecutive descriptors of at most
 * {@code limit} bytes travel back to back in shared chunks of at most {@code chunk} bytes. Announced with
 * the transfer (WRITE, READ, READ_INLINE, READ_DATA), so that both ends derive the same chunks. Valid
 * values are {@link #NONE} or {@code 0 < limit <= chunk}.
 *
 * <p>Each side contributes the packing its own memory allows and the transfer uses the smaller of the
 * two ({@link #min}): the copies of a packed chunk run on both sides, and the larger chunk pays off only
 * where both run on the GPU.
 */
public record Packing(int limit, int chunk) {

    /** No packed chunks: every descriptor travels on chunks of its own. */
    public static final Packing NONE = new Packing(0, 0);

    /**
     * Most bytes of a packed chunk of host memory. The CPU copies it on both sides; a chunk this small lets
     * the copies of one chunk overlap the wire time of its neighbours, which larger chunks do not
     * (docs/PERFORMANCE.md).
     */
    public static final int HOST_CHUNK = 128 * 1024;

    /**
     * Most bytes of a packed chunk of device memory. The unpack kernel gathers and scatters far faster
     * than the wire moves bytes, so what counts is the cost per chunk (a transport request, a staging
     * buffer, a launch): fewer, larger chunks.
     */
    static final int DEVICE_CHUNK = 512 * 1024;

    /**
     * The packing an engine offers for memory of {@code kind}: its limit for that kind, at most the
     * kind's packed chunk, which is at most {@code chunkSize}. {@link #NONE} for a limit of 0.
     */
    public static Packing of(MemoryKind kind, int limit, int chunkSize) {
        int chunk = Math.min(chunkSize, maxChunk(kind));
        return limit <= 0 ? NONE : new Packing(Math.min(limit, chunk), chunk);
    }

    /** Most bytes of a packed chunk of memory of {@code kind}: what a staging buffer of that kind holds. */
    public static int maxChunk(MemoryKind kind) {
        return kind == MemoryKind.DRAM ? HOST_CHUNK : DEVICE_CHUNK;
    }

    /** The packing {@code cfg} offers for memory of {@code kind}. */
    public static Packing of(MemoryKind kind, EngineConfig cfg) {
        int limit = kind == MemoryKind.DRAM ? cfg.coalesceLimit() : cfg.deviceCoalesceLimit();
        return of(kind, limit, cfg.chunkSize());
    }

    /** What both this and {@code other} allow (either may come from the peer: negative values count as none). */
    public Packing min(Packing other) {
        int c = Math.min(chunk, other.chunk);
        int l = Math.min(Math.min(limit, other.limit), c);
        return l <= 0 ? NONE : new Packing(l, c);
    }

    /** This packing in chunks of at most {@code chunk} bytes (its limit too). */
    public Packing cappedAt(int chunk) {
        return limit <= 0 || this.chunk <= chunk ? this : new Packing(Math.min(limit, chunk), chunk);
    }

    /** Whether descriptors are packed at all. */
    public boolean packs() {
        return limit > 0;
    }

    /** Whether this is a packing a peer may announce with chunks of {@code chunkSize} bytes. */
    public boolean isValid(int chunkSize) {
        return (limit == 0 && chunk == 0) || (limit > 0 && limit <= chunk && chunk <= chunkSize);
    }

    /**
     * Checks a chunk size and packing a peer announced, which may not exceed {@code offered} (null: any);
     * returns the packing, or throws REMOTE_DISCONNECT (a peer that announces garbage is dropped).
     */
    public static Packing announced(int chunk, Packing packing, Packing offered) {
        if (chunk < 1 || chunk > EngineConfig.MAX_CHUNK) {
            throw new TransferException(Code.REMOTE_DISCONNECT, "peer announced chunk size " + chunk);
        }
        if (!packing.isValid(chunk) || (offered != null && !packing.within(offered))) {
            throw new TransferException(Code.REMOTE_DISCONNECT,
                    "peer announced " + packing + " with chunks of " + chunk + ", offered " + offered);
        }
        return packing;
    }

    /** Whether this packing's chunks and limit are within {@code other}'s. */
    boolean within(Packing other) {
        return limit <= other.limit && chunk <= other.chunk;
    }
}
