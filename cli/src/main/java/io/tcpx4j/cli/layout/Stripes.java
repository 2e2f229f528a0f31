package io.tcpx4j.cli.layout;

import io.tcpx4j.api.MemoryDescriptor;

import java.util.List;
import java.util.Objects;

/**
 * Where the blocks of a bench row lie on one side whose memory is one buffer per GPU (or one buffer
 * of host memory). The row's blocks are counted in buffer order, block {@code s x batch + p} being
 * position p of the batch of slot s, and block b lies in buffer {@code b mod N} at byte
 * {@code (b div N) x block} of it, N the number of buffers: consecutive blocks go round the GPUs, so a
 * batch of at least N descriptors touches every GPU, and each GPU's share of a row is contiguous in
 * its buffer. With one buffer this is the plain layout, block b at {@code b x block}.
 *
 * <p>The other side of a transfer has a layout of its own (its own number of GPUs); descriptor i of a
 * transfer covers the same block number on both sides, so the pattern of {@code --check-consistency}
 * follows block numbers, not addresses: {@link Placement} says where a buffer's bytes lie in it.
 *
 * <p>Thread-safe (immutable).
 */
public final class Stripes {

    private final List<MemoryDescriptor> buffers;

    /** One buffer per GPU, in the order blocks go round them. */
    public Stripes(List<MemoryDescriptor> buffers) {
        this.buffers = List.copyOf(buffers);
        if (this.buffers.isEmpty()) {
            throw new IllegalArgumentException("no buffer");
        }
    }

    /** A single buffer: the plain layout. */
    public static Stripes of(MemoryDescriptor buffer) {
        return new Stripes(List.of(Objects.requireNonNull(buffer, "buffer")));
    }

    /** Bytes each of {@code buffers} buffers needs to hold {@code blocks} blocks of {@code block} bytes. */
    public static long bytesPerBuffer(long blocks, long block, int buffers) {
        if (blocks < 0 || block < 0 || buffers < 1) {
            throw new IllegalArgumentException(blocks + " blocks of " + block + " bytes in " + buffers + " buffers");
        }
        return (blocks + buffers - 1) / buffers * block;
    }

    public int count() {
        return buffers.size();
    }

    public List<MemoryDescriptor> buffers() {
        return buffers;
    }

    /** Block {@code b} of a row of {@code block}-byte blocks. */
    public MemoryDescriptor block(long b, long block) {
        int n = buffers.size();
        return buffers.get((int) (b % n)).slice(b / n * block, block);
    }

    /** Whether every buffer is long enough for its share of {@code blocks} blocks of {@code block} bytes. */
    public boolean holds(long blocks, long block) {
        int n = buffers.size();
        for (int i = 0; i < n; i++) {
            long here = blocks > i ? (blocks - 1 - i) / n + 1 : 0;
            if (buffers.get(i).length() < here * block) {
                return false;
            }
        }
        return true;
    }

    /**
     * The share of buffer {@code i} in blocks {@code [first, first + count)} of a row of {@code block}-byte
     * blocks: a contiguous range of that buffer (empty when none of the blocks lies there), and where its
     * bytes lie in the pattern of those blocks, block {@code first} being the pattern's start.
     */
    public Part part(int i, long first, long count, long block) {
        int n = buffers.size();
        long firstHere = first + Math.floorMod(i - first, n);
        long end = first + count;
        long blocks = firstHere < end ? (end - 1 - firstHere) / n + 1 : 0;
        MemoryDescriptor region = buffers.get(i).slice(blocks == 0 ? 0 : firstHere / n * block, blocks * block);
        return new Part(region, new Placement(block, firstHere - first, n));
    }

    /**
     * A contiguous range of one buffer and where it lies in a pattern.
     *
     * @param region    the bytes
     * @param placement where they lie in the pattern
     */
    public record Part(MemoryDescriptor region, Placement placement) {
    }

    /**
     * Where the bytes of a range lie in a pattern stream: its j-th block of {@code block} bytes is block
     * {@code first + j x stride} of the stream.
     *
     * @param block  bytes per block
     * @param first  the stream block of the range's first block
     * @param stride stream blocks from one of the range's blocks to the next (the number of buffers)
     */
    public record Placement(long block, long first, int stride) {

        /** A range that is the stream itself from its start: byte x is stream byte x. */
        public static final Placement PLAIN = new Placement(1, 0, 1);

        public Placement {
            if (block < 1 || first < 0 || stride < 1) {
                throw new IllegalArgumentException("placement " + block + ", " + first + ", " + stride);
            }
        }

        /** The stream offset of byte {@code x} of the range. */
        public long streamOffset(long x) {
            return (first + x / block * stride) * block + x % block;
        }

        /** The end of the run of the range's bytes from {@code x} on that continue the stream without a gap. */
        public long runEnd(long x) {
            return stride == 1 ? Long.MAX_VALUE : (x / block + 1) * block;
        }
    }
}
