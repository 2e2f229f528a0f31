package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;

/**
 * The unpack kernel's input: a table of copies with absolute addresses, laid out as three arrays in
 * one host buffer ({@code u64 src[capacity]}, {@code u64 dst[capacity]}, {@code u32 len[capacity]}),
 * so that a warp's lanes fetch 32 records with one coalesced access each even across PCIe.
 *
 * <p>{@link #validate} checks a receive's fragment table exactly as
 * {@link io.tcpx4j.domain.memory.CpuUnpacker#unpack} does, before anything of it is queued, so a bad
 * table is rejected whole. {@link #append} then splits fragments longer than {@link #MAX_PIECE} so
 * that one huge fragment cannot keep one warp busy while the others idle.
 *
 * <p><b>Not thread-safe.</b>
 */
final class WorkList {

    /** Bytes per record across the three arrays. */
    static final int RECORD_BYTES = 8 + 8 + 4;
    /** Longest copy one record describes; the kernel relies on it for 32-bit index arithmetic. */
    static final int MAX_PIECE = 64 * 1024;

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
     * Checks a completed receive's fragments: count within TCPX's limit, every destination range
     * inside the posted size. Returns the number of records {@link #append} will produce.
     *
     * @throws TransferException BACKEND for a malformed table
     */
    static long validate(NetRequest request) {
        int count = request.fragmentCount();
        if (count < 0 || count > NetRequest.MAX_FRAGMENTS) {
            throw new TransferException(TransferException.Code.BACKEND, "fragment count " + count + " out of range");
        }
        long table = request.fragmentsAddress();
        long size = Integer.toUnsignedLong(request.size());
        long records = 0;
        for (int i = 0; i < count; i++) {
            long rec = table + (long) i * NetRequest.FRAGMENT_BYTES;
            long len = Integer.toUnsignedLong(NativeMemory.getInt(rec + 4));
            long dstOff = NativeMemory.getLong(rec + 8);
            if (dstOff < 0 || dstOff > size || len > size - dstOff) {
                throw new TransferException(TransferException.Code.BACKEND,
                        "fragment " + i + " [" + dstOff + ", +" + len + ") outside a receive of " + size + " bytes");
            }
            records += (len + MAX_PIECE - 1) / MAX_PIECE;
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
        int count = request.fragmentCount();
        if (count < 0 || count > NetRequest.MAX_FRAGMENTS) {
            throw new TransferException(TransferException.Code.BACKEND, "fragment count " + count + " out of range");
        }
        if (count > capacity - size) {
            return false;
        }
        int mark = size;
        long markBytes = bytes;
        long table = request.fragmentsAddress();
        long bounce = request.bounceBase();
        long total = Integer.toUnsignedLong(request.size());
        for (int i = 0; i < count; i++) {
            long rec = table + (long) i * NetRequest.FRAGMENT_BYTES;
            long srcOff = Integer.toUnsignedLong(NativeMemory.getInt(rec));
            long len = Integer.toUnsignedLong(NativeMemory.getInt(rec + 4));
            long dstOff = NativeMemory.getLong(rec + 8);
            if (dstOff < 0 || dstOff > total || len > total - dstOff) {
                size = mark;
                bytes = markBytes;
                throw new TransferException(TransferException.Code.BACKEND,
                        "fragment " + i + " [" + dstOff + ", +" + len + ") outside a receive of " + total + " bytes");
            }
            long src = bounce + srcOff;
            long dst = destination + dstOff;
            while (len > 0) {
                if (size == capacity) {
                    size = mark;
                    bytes = markBytes;
                    return false;
                }
                int piece = (int) Math.min(len, MAX_PIECE);
                add(src, dst, piece);
                src += piece;
                dst += piece;
                len -= piece;
            }
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
        WorkList list = this;
        int count = request.fragmentCount();
        long table = request.fragmentsAddress();
        long bounce = request.bounceBase();
        for (int i = 0; i < count; i++) {
            long rec = table + (long) i * NetRequest.FRAGMENT_BYTES;
            long src = bounce + Integer.toUnsignedLong(NativeMemory.getInt(rec));
            long len = Integer.toUnsignedLong(NativeMemory.getInt(rec + 4));
            long dst = destination + NativeMemory.getLong(rec + 8);
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
        }
        return list;
    }
}
