package io.tcpx4j.domain.memory;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.NetRequest;

/**
 * Reads a completed receive's fragment table ({@link NetRequest}: 16-byte records {@code u32 srcOff,
 * u32 len, u64 dstOff}) one fragment at a time and checks every one before handing it out. It is the
 * only place that decides whether a table the transport (ultimately the network plugin) wrote may be
 * acted on:
 * <ul>
 *   <li>the fragment count is 0 (landed in place) or 1..{@link NetRequest#MAX_FRAGMENTS};
 *   <li>{@code [srcOff, srcOff+len)} lies inside the bounce area ({@link NetRequest#bounceBytes()});
 *   <li>{@code [dstOff, dstOff+len)} lies inside the posted receive ({@link NetRequest#size()}).
 * </ul>
 * Anything else is a BACKEND error naming the fragment, and nothing of it may be copied. The
 * arithmetic works on unsigned 32-bit and non-negative 64-bit values, so no sum can wrap.
 *
 * <p>A flyweight: {@link #reset} it per receive, then call {@link #next()} until it returns false.
 * Allocates nothing.
 *
 * <p><b>Not thread-safe.</b>
 */
public final class FragmentReader {

    private long table;
    private long bounceBase;
    private long bounceBytes;
    private long size;
    private int count;
    private int index;
    private long sourceOffset;
    private long length;
    private long destinationOffset;

    /**
     * Starts reading {@code request}'s table and returns its fragment count (0: nothing to unpack).
     *
     * @throws TransferException BACKEND for a count outside 0..{@link NetRequest#MAX_FRAGMENTS}
     */
    public int reset(NetRequest request) {
        int n = request.fragmentCount();
        if (n < 0 || n > NetRequest.MAX_FRAGMENTS) {
            throw new TransferException(TransferException.Code.BACKEND,
                    "fragment count " + n + " out of range (0.." + NetRequest.MAX_FRAGMENTS + ")");
        }
        count = n;
        index = -1;
        if (n > 0) {
            table = request.fragmentsAddress();
            bounceBase = request.bounceBase();
            bounceBytes = request.bounceBytes();
            size = Integer.toUnsignedLong(request.size());
        }
        return n;
    }

    /** Fragments of the current table. */
    public int count() {
        return count;
    }

    /**
     * Reads and checks the next fragment; false when there is none left.
     *
     * @throws TransferException BACKEND for a fragment outside the bounce area or the receive
     */
    public boolean next() {
        if (index + 1 >= count) {
            index = count;
            return false;
        }
        index++;
        long rec = table + (long) index * NetRequest.FRAGMENT_BYTES;
        long src = Integer.toUnsignedLong(NativeMemory.getInt(rec));
        long len = Integer.toUnsignedLong(NativeMemory.getInt(rec + 4));
        long dst = NativeMemory.getLong(rec + 8);
        check(index, src, len, dst, bounceBytes, size);
        sourceOffset = src;
        length = len;
        destinationOffset = dst;
        return true;
    }

    /**
     * The bounds check on its own: fragment {@code i} reads {@code [src, src+len)} of a bounce area of
     * {@code bounceBytes} and writes {@code [dst, dst+len)} of a receive of {@code size} bytes.
     *
     * @throws TransferException BACKEND when either range is outside
     */
    static void check(int i, long src, long len, long dst, long bounceBytes, long size) {
        if (dst < 0 || dst > size || len > size - dst) {
            throw new TransferException(TransferException.Code.BACKEND,
                    "fragment " + i + " [" + dst + ", +" + len + ") outside a receive of " + size + " bytes");
        }
        if (src < 0 || bounceBytes < 0 || src > bounceBytes || len > bounceBytes - src) {
            throw new TransferException(TransferException.Code.BACKEND, "fragment " + i + " reads [" + src + ", +"
                    + len + ") outside a bounce area of " + bounceBytes + " bytes");
        }
    }

    /** Index of the current fragment. */
    public int index() {
        return index;
    }

    /** Absolute address the current fragment is copied from: bounce base + srcOff. */
    public long source() {
        return bounceBase + sourceOffset;
    }

    /** Byte count of the current fragment (0 to 4 GiB - 1). */
    public long length() {
        return length;
    }

    /** Offset of the current fragment in the receive's destination. */
    public long destinationOffset() {
        return destinationOffset;
    }
}
