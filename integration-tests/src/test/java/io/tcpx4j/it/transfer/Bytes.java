package io.tcpx4j.it.transfer;

import io.tcpx4j.domain.memory.NativeMemory;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * Native buffers for the multi-engine tests: seeded pseudo-random content that both sides of a
 * transfer can regenerate (so a 256 MiB buffer is verified byte by byte without a second copy),
 * poison, and SHA-256 digests to compare buffers across processes.
 *
 * <p>Thread-safe (stateless).
 */
public final class Bytes {

    /** Fills destinations before a transfer; random data contains it too, so only guards rely on it. */
    public static final byte POISON = (byte) 0xA5;

    private Bytes() {
    }

    /** Writes the pattern of {@code seed} over {@code [address, address+length)}. */
    public static void fill(long address, long length, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long off = 0;
        for (; off + Long.BYTES <= length; off += Long.BYTES) {
            NativeMemory.putLong(address + off, r.nextLong());
        }
        long last = r.nextLong();
        for (int i = 0; off < length; off++, i++) {
            NativeMemory.putByte(address + off, (byte) (last >>> (8 * i)));
        }
    }

    /** The offset of the first byte that differs from the pattern of {@code seed}, or -1. */
    public static long firstMismatchWithPattern(long address, long length, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long off = 0;
        for (; off + Long.BYTES <= length; off += Long.BYTES) {
            long expected = r.nextLong();
            long actual = NativeMemory.getLong(address + off);
            if (actual != expected) {
                // little-endian x86: the lowest differing byte is the first in memory
                return off + Long.numberOfTrailingZeros(actual ^ expected) / 8;
            }
        }
        long last = r.nextLong();
        for (int i = 0; off < length; off++, i++) {
            if (NativeMemory.getByte(address + off) != (byte) (last >>> (8 * i))) {
                return off;
            }
        }
        return -1;
    }

    /** The offset of the first byte where two ranges differ, or -1. */
    public static long firstMismatchBetween(long a, long b, long length) {
        for (long off = 0; off < length; off += Integer.MAX_VALUE) {
            int n = (int) Math.min(Integer.MAX_VALUE, length - off);
            int m = NativeMemory.view(a + off, n).mismatch(NativeMemory.view(b + off, n));
            if (m >= 0) {
                return off + m;
            }
        }
        return -1;
    }

    /** Whether every byte of the range is {@code value}. */
    public static boolean all(long address, long length, byte value) {
        for (long off = 0; off < length; off++) {
            if (NativeMemory.getByte(address + off) != value) {
                return false;
            }
        }
        return true;
    }

    /** SHA-256 of the range, as lower-case hex. */
    public static String sha256(long address, long length) {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        byte[] block = new byte[1 << 20];
        for (long off = 0; off < length; off += block.length) {
            int n = (int) Math.min(block.length, length - off);
            NativeMemory.get(address + off, block, 0, n);
            md.update(block, 0, n);
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
