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
 * <p>A receive of a packed chunk (consecutive descriptors back to back) is read with
 * {@link #reset(NetRequest, long[], long[], int, int)}: then every fragment is handed out in pieces, split
 * where one descriptor ends and the next begins, each with the absolute address inside its descriptor.
 *
 * <p>A flyweight: {@link #reset} it per receive, then call {@link #next()} until it returns false
 * ({@link #rewind()} reads the same table again). Allocates nothing.
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
    /** Destination base of a plain receive. */
    private long base;
    // packed receives: descriptors [runFirst, runEnd) of these arrays, back to back from offset 0
    private long[] runAddresses;
    private long[] runLengths;
    private int runFirst;
    private int runEnd;
    /** The descriptor the current piece lies in, and its offset in the receive. */
    private int runIndex;
    private long runStart;
    /** What is left of the current fragment after the current piece. */
    private long restSource;
    private long restLength;
    private long restDestination;
    private long piece;

    /**
     * Starts reading {@code request}'s table and returns its fragment count (0: nothing to unpack).
     *
     * @throws TransferException BACKEND for a count outside 0..{@link NetRequest#MAX_FRAGMENTS}
     */
    public int reset(NetRequest request) {
        return reset(request, 0);
    }

    /**
     * {@link #reset(NetRequest)} for a receive whose destination is {@code destination}: {@link #destination()}
     * is then that plus the fragment's offset.
     */
    public int reset(NetRequest request, long destination) {
        runAddresses = null;
        base = destination;
        return start(request);
    }

    /**
     * {@link #reset(NetRequest)} for a packed receive: byte {@code o} of it belongs to the descriptor of
     * {@code [first, end)} (addresses and lengths) that covers offset {@code o} when they lie back to back,
     * and every fragment is handed out in pieces that each stay inside one descriptor.
     */
    public int reset(NetRequest request, long[] addresses, long[] lengths, int first, int end) {
        runAddresses = addresses;
        runLengths = lengths;
        runFirst = first;
        runEnd = end;
        return start(request);
    }

    /** Reads the table from its first fragment again. */
    public void rewind() {
        index = -1;
        restLength = 0;
        runIndex = runFirst;
        runStart = 0;
    }

    private int start(NetRequest request) {
        int n = request.fragmentCount();
        if (n < 0 || n > NetRequest.MAX_FRAGMENTS) {
            throw new TransferException(TransferException.Code.BACKEND,
                    "fragment count " + n + " out of range (0.." + NetRequest.MAX_FRAGMENTS + ")");
        }
        count = n;
        rewind();
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
        return runAddresses != null ? nextPiece() : nextFragment();
    }

    private boolean nextFragment() {
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

    /** The next piece of a packed receive: the rest of the current fragment, or the next fragment's start. */
    private boolean nextPiece() {
        if (restLength == 0) {
            if (!nextFragment()) {
                return false;
            }
            restSource = sourceOffset;
            restLength = length;
            restDestination = destinationOffset;
            if (length == 0) {
                piece = runAddresses[runFirst];
                return true;
            }
        }
        if (restDestination < runStart) {
            runIndex = runFirst;
            runStart = 0;
        }
        while (runIndex < runEnd && restDestination >= runStart + runLengths[runIndex]) {
            runStart += runLengths[runIndex];
            runIndex++;
        }
        if (runIndex == runEnd) {
            throw new TransferException(TransferException.Code.BACKEND, "fragment " + index + " at offset "
                    + restDestination + " lies past the packed descriptors (" + runStart + " bytes)");
        }
        long n = Math.min(restLength, runStart + runLengths[runIndex] - restDestination);
        sourceOffset = restSource;
        destinationOffset = restDestination;
        length = n;
        piece = runAddresses[runIndex] + (restDestination - runStart);
        restSource += n;
        restDestination += n;
        restLength -= n;
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

    /** Byte count of the current fragment or piece (0 to 4 GiB - 1). */
    public long length() {
        return length;
    }

    /** Offset of the current fragment (or piece) in the receive. */
    public long destinationOffset() {
        return destinationOffset;
    }

    /**
     * Absolute address the current fragment (or piece) is copied to: the destination given to
     * {@link #reset(NetRequest, long)} plus its offset, or the address inside its packed descriptor.
     */
    public long destination() {
        return runAddresses != null ? piece : base + destinationOffset;
    }
}
