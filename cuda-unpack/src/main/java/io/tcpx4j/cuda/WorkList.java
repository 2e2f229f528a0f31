package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.FragmentReader;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;

/**
 * The unpack kernel's input: a table of copies with absolute addresses, laid out as three arrays in
 * one host buffer ({@code u64 src[capacity]}, {@code u64 dst[capacity]}, {@code u32 len[capacity]}),
 * so that a warp's lanes fetch 32 records with one coalesced access each even across PCIe.
 *
 * <p>Fragment tables are read and checked by {@link FragmentReader}, as
 * {@link io.tcpx4j.domain.memory.CpuScatterGather} reads them; {@link #validate} checks a whole table
 * before anything of it is queued, so a bad table is rejected whole. {@link #append} then splits fragments longer than {@link #MAX_PIECE} so
 * that one huge fragment cannot keep one warp busy while the others idle.
 *
 * <p><b>Not thread-safe.</b>
 */
final class WorkList {

    /** Bytes per record across the three arrays. */
    static final int RECORD_BYTES = 8 + 8 + 4;
    /** Longest copy one record describes; the kernel relies on it for 32-bit index arithmetic. */
    static final int MAX_PIECE = 64 * 1024;

    private final FragmentReader reader = new FragmentReader();
    private final long base;
    private final int capacity;
    private int size;
    private long bytes;

    /** A list over {@code capacity * RECORD_BYTES} bytes at {@code base} (the caller owns that memory). */
    WorkList(long base, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        this.base = base;
        this.capacity = capacity;
    }

    /** Bytes a list of {@code capacity} records needs. */
    static long bytesFor(int capacity) {
        return (long) capacity * RECORD_BYTES;
    }

    long base() {
        return base;
    }

    int capacity() {
        return capacity;
    }

    int size() {
        return size;
    }

    boolean isFull() {
        return size == capacity;
    }

    /** Payload bytes of all records. */
    long bytes() {
        return bytes;
    }

    void clear() {
        size = 0;
        bytes = 0;
    }

    long srcAt(int i) {
        return NativeMemory.getLong(base + 8L * i);
    }

    long dstAt(int i) {
        return NativeMemory.getLong(base + 8L * capacity + 8L * i);
    }

    int lenAt(int i) {
        return NativeMemory.getInt(base + 16L * capacity + 4L * i);
    }

    /** Appends one copy; the caller checked {@link #isFull()} and {@code len <= MAX_PIECE}. */
    void add(long src, long dst, int len) {
        NativeMemory.putLong(base + 8L * size, src);
        NativeMemory.putLong(base + 8L * capacity + 8L * size, dst);
        NativeMemory.putInt(base + 16L * capacity + 4L * size, len);
        size++;
        bytes += len;
    }

    /**
     * Checks a completed receive's whole fragment table with {@link FragmentReader} and returns the
     * number of records {@link #append} will produce.
     *
     * @throws TransferException BACKEND for a malformed table
     */
    long validate(NetRequest request) {
        reader.reset(request);
        return validate(reader);
    }

    /** {@link #validate(NetRequest)} of the table {@code reader} was reset to (read from its start). */
    static long validate(FragmentReader reader) {
        reader.rewind();
        long records = 0;
        while (reader.next()) {
            records += (reader.length() + MAX_PIECE - 1) / MAX_PIECE;
        }
        return records;
    }

    /**
     * Validates and appends a receive in one pass if all its records fit in this list; otherwise,
     * or when a fragment is invalid, leaves the list as it was. Returns whether it appended (false:
     * use {@link #validate} and {@link #append}). Reading the table once instead of twice is most of
     * the host's cost per fragment.
     *
     * @throws TransferException BACKEND for a malformed table (nothing appended)
     */
    boolean appendIfFits(NetRequest request, long destination) {
        reader.reset(request, destination);
        return appendIfFits(reader);
    }

    /** {@link #appendIfFits(NetRequest, long)} of the table {@code reader} was reset to (read from its start). */
    boolean appendIfFits(FragmentReader reader) {
        reader.rewind();
        if (reader.count() > capacity - size) {
            return false;
        }
        int mark = size;
        long markBytes = bytes;
        try {
            while (reader.next()) {
                if (!addPieces(reader.source(), reader.destination(), reader.length())) {
                    size = mark;
                    bytes = markBytes;
                    return false;
                }
            }
        } catch (TransferException e) {
            size = mark;
            bytes = markBytes;
            throw e;
        }
        return true;
    }

    /** Appends a copy as pieces of at most {@link #MAX_PIECE}; false if they do not all fit (some may be added). */
    private boolean addPieces(long src, long dst, long len) {
        while (len > 0) {
            if (size == capacity) {
                return false;
            }
            int piece = (int) Math.min(len, MAX_PIECE);
            add(src, dst, piece);
            src += piece;
            dst += piece;
            len -= piece;
        }
        return true;
    }

    /** Source for {@link #append}: where to continue when the list fills up. */
    interface Overflow {
        /** Called when the list is full; must leave it with room (launch it and clear, or switch lists). */
        WorkList flush(WorkList full);
    }

    /**
     * Appends the records of a {@link #validate validated} receive whose data goes to
     * {@code destination}, calling {@code overflow} whenever the list fills. Returns the list that
     * holds the last record (the one to keep appending to).
     */
    WorkList append(NetRequest request, long destination, Overflow overflow) {
        reader.reset(request, destination);
        return append(reader, overflow);
    }

    /** {@link #append(NetRequest, long, Overflow)} of the table {@code reader} was reset to (read from its start). */
    WorkList append(FragmentReader reader, Overflow overflow) {
        WorkList list = this;
        reader.rewind();
        while (reader.next()) {
            list = list.appendCopy(reader.source(), reader.destination(), reader.length(), overflow);
        }
        return list;
    }

    /**
     * Appends one copy of {@code len} bytes as pieces of at most {@link #MAX_PIECE}, calling
     * {@code overflow} whenever the list fills; returns the list that holds the last piece.
     */
    WorkList appendCopy(long src, long dst, long len, Overflow overflow) {
        WorkList list = this;
        while (len > 0) {
            int piece = (int) Math.min(len, MAX_PIECE);
            if (list.isFull()) {
                list = overflow.flush(list);
            }
            list.add(src, dst, piece);
            src += piece;
            dst += piece;
            len -= piece;
        }
        return list;
    }
}
