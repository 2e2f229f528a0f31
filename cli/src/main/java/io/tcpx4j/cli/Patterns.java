package io.tcpx4j.cli;

import io.tcpx4j.domain.memory.NativeMemory;

import java.nio.ByteOrder;

/**
 * The data of {@code --check-consistency}: a pseudo-random byte stream that is a pure function of
 * (seed, offset), so that any side — the initiator, an embedded target or a remote one — can write
 * or check any range of it without shipping the data. Works on host addresses only; device memory
 * goes through a host staging buffer ({@link Node}).
 *
 * <p>Thread-safe (stateless), except for the test seam {@link #beforeVerify}.
 */
final class Patterns {

    private static final boolean BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;

    /** Receives the host range about to be verified. Tests flip a byte here to prove that checks fail. */
    interface Hook {
        void apply(long address, long length);
    }

    /** Test seam: runs on every host range just before {@link #verify} reads it; null for none. */
    static volatile Hook beforeVerify;

    private Patterns() {
    }

    /** Writes the stream bytes {@code [offset, offset+length)} of {@code seed} at {@code address}. */
    static void fill(long address, long length, long seed, long offset) {
        long i = 0;
        // whole words where the stream offset is word aligned (always the case for the bench's buffers)
        if ((offset & 7) == 0) {
            for (; i + 8 <= length; i += 8) {
                NativeMemory.putLong(address + i, nativeWord(seed, (offset + i) >>> 3));
            }
        }
        for (; i < length; i++) {
            NativeMemory.putByte(address + i, byteAt(seed, offset + i));
        }
    }

    /** Counts the bytes at {@code address} that differ from the stream {@code [offset, offset+length)}. */
    static long verify(long address, long length, long seed, long offset) {
        Hook hook = beforeVerify;
        if (hook != null) {
            hook.apply(address, length);
        }
        long bad = 0;
        long i = 0;
        if ((offset & 7) == 0) {
            for (; i + 8 <= length; i += 8) {
                long diff = NativeMemory.getLong(address + i) ^ nativeWord(seed, (offset + i) >>> 3);
                if (diff != 0) {
                    for (int b = 0; b < 8; b++) {
                        if (((diff >>> (b * 8)) & 0xff) != 0) {
                            bad++;
                        }
                    }
                }
            }
        }
        for (; i < length; i++) {
            if (NativeMemory.getByte(address + i) != byteAt(seed, offset + i)) {
                bad++;
            }
        }
        return bad;
    }

    static byte byteAt(long seed, long offset) {
        return (byte) (word(seed, offset >>> 3) >>> ((offset & 7) * 8));
    }

    /** Word {@code index} as stored in native order, so that byte k of it is {@link #byteAt}(8*index+k). */
    private static long nativeWord(long seed, long index) {
        long w = word(seed, index);
        return BIG_ENDIAN ? Long.reverseBytes(w) : w;
    }

    /** SplitMix64 of (seed, index): fast, and every bit depends on both. */
    private static long word(long seed, long index) {
        long z = seed + (index + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
