package io.tcpx4j.api;

import sun.misc.Unsafe;

import java.lang.reflect.Field;
import java.util.Objects;

/**
 * Host memory (DRAM) outside the Java heap that an engine can register and move: page aligned
 * (4 KiB), zeroed, with a fixed native address for its whole life. Register its
 * {@link #descriptor()} with {@link TransferEngine#register(MemoryDescriptor)}, use slices of it in
 * {@code write}/{@code read}, and copy bytes in and out with {@link #put} and {@link #get}.
 *
 * <pre>{@code
 * try (HostBuffer buf = HostBuffer.allocate(1 << 20);
 *      RegisteredMemory reg = engine.register(buf.descriptor())) {
 *     buf.put(0, payload);
 *     ...
 * }
 * }</pre>
 *
 * <p>Memory that other code owns (a GPU pointer, a buffer of a native library) needs no
 * {@code HostBuffer}: describe it with {@link MemoryDescriptor#dram} or {@link MemoryDescriptor#vram}.
 *
 * <p>Thread-safe for {@link #put} and {@link #get} on disjoint or read-only ranges. {@link #close()}
 * frees the memory: deregister it and let every transfer that touches it finish first, and call
 * nothing else concurrently with it.
 */
public final class HostBuffer implements AutoCloseable {

    /** Alignment of every buffer: the host page, which TCPX's bounce pages match too. */
    public static final int ALIGNMENT = 4096;

    private static final Unsafe UNSAFE;
    private static final long BYTE_ARRAY_BASE;

    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            UNSAFE = (Unsafe) f.get(null);
            BYTE_ARRAY_BASE = UNSAFE.arrayBaseOffset(byte[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long raw;
    private final MemoryDescriptor descriptor;
    private volatile boolean closed;

    private HostBuffer(long raw, MemoryDescriptor descriptor) {
        this.raw = raw;
        this.descriptor = descriptor;
    }

    /**
     * Allocates {@code bytes} of zeroed host memory.
     *
     * @throws TransferException INVALID_PARAM if {@code bytes} is not positive, BACKEND if the
     *                           memory cannot be allocated
     */
    public static HostBuffer allocate(long bytes) {
        if (bytes <= 0 || bytes > Long.MAX_VALUE - ALIGNMENT) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "cannot allocate " + bytes + " bytes");
        }
        long raw;
        try {
            raw = UNSAFE.allocateMemory(bytes + ALIGNMENT);
        } catch (OutOfMemoryError e) {
            throw new TransferException(TransferException.Code.BACKEND,
                    "cannot allocate " + bytes + " bytes of host memory: " + e.getMessage());
        }
        long aligned = (raw + ALIGNMENT - 1) & -(long) ALIGNMENT;
        UNSAFE.setMemory(aligned, bytes, (byte) 0);
        return new HostBuffer(raw, MemoryDescriptor.dram(aligned, bytes));
    }

    /** The whole buffer, for {@code register} and (sliced) for transfers. */
    public MemoryDescriptor descriptor() {
        return descriptor;
    }

    /** Length in bytes. */
    public long length() {
        return descriptor.length();
    }

    /** Copies all of {@code src} into this buffer at {@code offset}. */
    public void put(long offset, byte[] src) {
        put(offset, src, 0, src.length);
    }

    /** Copies {@code length} bytes of {@code src} from {@code srcOffset} into this buffer at {@code offset}. */
    public void put(long offset, byte[] src, int srcOffset, int length) {
        long at = checkRange(offset, src, srcOffset, length);
        UNSAFE.copyMemory(src, BYTE_ARRAY_BASE + srcOffset, null, at, length);
    }

    /** Fills {@code dst} from this buffer at {@code offset}. */
    public void get(long offset, byte[] dst) {
        get(offset, dst, 0, dst.length);
    }

    /** Copies {@code length} bytes of this buffer at {@code offset} into {@code dst} from {@code dstOffset}. */
    public void get(long offset, byte[] dst, int dstOffset, int length) {
        long at = checkRange(offset, dst, dstOffset, length);
        UNSAFE.copyMemory(null, at, dst, BYTE_ARRAY_BASE + dstOffset, length);
    }

    private long checkRange(long offset, byte[] array, int arrayOffset, int length) {
        Objects.requireNonNull(array, "array");
        Objects.checkFromIndexSize(arrayOffset, length, array.length);
        if (closed) {
            throw new IllegalStateException("buffer closed");
        }
        if (offset < 0 || offset > descriptor.length() - length) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "[" + offset + ", +" + length + ") outside a buffer of " + descriptor.length() + " bytes");
        }
        return descriptor.address() + offset;
    }

    /** Frees the memory. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        UNSAFE.freeMemory(raw);
    }

    @Override
    public String toString() {
        return "HostBuffer[" + descriptor + (closed ? ", closed]" : "]");
    }
}
