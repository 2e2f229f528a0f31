package io.tcpx4j.domain.memory;

import io.tcpx4j.api.TransferException;
import sun.misc.Unsafe;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Raw host memory by address: allocation, copies, and direct {@link ByteBuffer} views over native
 * ranges for socket I/O. The engine works on native addresses because its peers (NIXL agents, GPUs,
 * the TCPX plugin) do; Java 17 has no supported API for that, so this uses {@code sun.misc.Unsafe}
 * from {@code jdk.unsupported}, the module the JDK keeps for exactly this.
 *
 * <p>Thread-safe (stateless). Callers own the validity of every address they pass.
 */
public final class NativeMemory {

    private static final Unsafe UNSAFE;
    private static final long BUFFER_ADDRESS;
    private static final long BUFFER_CAPACITY;
    private static final long BYTE_ARRAY_BASE;

    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            UNSAFE = (Unsafe) f.get(null);
            BUFFER_ADDRESS = UNSAFE.objectFieldOffset(Buffer.class.getDeclaredField("address"));
            BUFFER_CAPACITY = UNSAFE.objectFieldOffset(Buffer.class.getDeclaredField("capacity"));
            BYTE_ARRAY_BASE = UNSAFE.arrayBaseOffset(byte[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Host page size assumed for alignment (TCPX bounce pages are 4 KiB too). */
    public static final int PAGE = 4096;

    private NativeMemory() {
    }

    /**
     * Allocates {@code size} bytes aligned to {@code alignment} (a power of two). Free with
     * {@link #free(long)} passing the returned address.
     */
    public static long allocate(long size, int alignment) {
        if (size < 0 || alignment <= 0 || Integer.bitCount(alignment) != 1) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "bad allocation: size " + size + ", alignment " + alignment);
        }
        // Header of one long before the aligned address keeps the raw pointer for free().
        long raw = UNSAFE.allocateMemory(size + alignment + Long.BYTES);
        long aligned = (raw + Long.BYTES + alignment - 1) & -(long) alignment;
        UNSAFE.putLong(aligned - Long.BYTES, raw);
        return aligned;
    }

    /** Frees memory from {@link #allocate(long, int)}. */
    public static void free(long address) {
        if (address != 0) {
            UNSAFE.freeMemory(UNSAFE.getLong(address - Long.BYTES));
        }
    }

    public static void copy(long source, long destination, long length) {
        UNSAFE.copyMemory(source, destination, length);
    }

    /**
     * Copies ranges {@code first..end-1} ({@code addresses[i]}, {@code lengths[i]} bytes) back to back to
     * {@code to}; returns the bytes copied.
     */
    public static long gather(long[] addresses, long[] lengths, int first, int end, long to) {
        long at = to;
        for (int i = first; i < end; i++) {
            UNSAFE.copyMemory(addresses[i], at, lengths[i]);
            at += lengths[i];
        }
        return at - to;
    }

    /** Copies the bytes back to back at {@code from} out to ranges {@code first..end-1}, as gather reads them. */
    public static void scatter(long from, long[] addresses, long[] lengths, int first, int end) {
        for (int i = first; i < end; i++) {
            UNSAFE.copyMemory(from, addresses[i], lengths[i]);
            from += lengths[i];
        }
    }

    public static void fill(long address, long length, byte value) {
        UNSAFE.setMemory(address, length, value);
    }

    public static void put(long address, byte[] src, int offset, int length) {
        checkArray(src, offset, length);
        UNSAFE.copyMemory(src, BYTE_ARRAY_BASE + offset, null, address, length);
    }

    public static void get(long address, byte[] dst, int offset, int length) {
        checkArray(dst, offset, length);
        UNSAFE.copyMemory(null, address, dst, BYTE_ARRAY_BASE + offset, length);
    }

    public static byte getByte(long address) {
        return UNSAFE.getByte(address);
    }

    public static void putByte(long address, byte value) {
        UNSAFE.putByte(address, value);
    }

    public static int getInt(long address) {
        return UNSAFE.getInt(address);
    }

    public static void putInt(long address, int value) {
        UNSAFE.putInt(address, value);
    }

    public static long getLong(long address) {
        return UNSAFE.getLong(address);
    }

    public static void putLong(long address, long value) {
        UNSAFE.putLong(address, value);
    }

    /** The native address of a direct buffer's first byte. */
    public static long address(ByteBuffer direct) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("not a direct buffer");
        }
        return UNSAFE.getLong(direct, BUFFER_ADDRESS);
    }

    /**
     * A new reusable view for {@link #retarget}. The view never owns memory: retargeting it does not
     * affect the tiny allocation it was made with, which the JDK frees with the view.
     */
    public static ByteBuffer newView() {
        return ByteBuffer.allocateDirect(1).order(ByteOrder.nativeOrder());
    }

    /**
     * Points a view from {@link #newView()} at {@code [address, address+length)}, position 0, limit
     * {@code length}. Reuses the object, so the I/O path allocates nothing per chunk.
     */
    public static ByteBuffer retarget(ByteBuffer view, long address, int length) {
        if (length < 0) {
            throw new IllegalArgumentException("negative length");
        }
        UNSAFE.putLong(view, BUFFER_ADDRESS, address);
        UNSAFE.putInt(view, BUFFER_CAPACITY, length);
        view.clear();
        return view;
    }

    /** A fresh view over a native range (allocates one object). */
    public static ByteBuffer view(long address, int length) {
        return retarget(newView(), address, length);
    }

    private static void checkArray(byte[] array, int offset, int length) {
        if (offset < 0 || length < 0 || offset > array.length - length) {
            throw new IndexOutOfBoundsException("offset " + offset + ", length " + length + ", array " + array.length);
        }
    }
}
