package io.tcpx4j.it.reliability;

import io.tcpx4j.domain.memory.NativeMemory;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * Native test buffers with a process-wide count of what is still allocated (a leak check reads it),
 * plus the byte helpers the tests share: random fills, poison, checksums, snapshots.
 *
 * <p>Thread-safe.
 */
final class Buffers {

    private static final AtomicLong LIVE = new AtomicLong();
    private static final AtomicLong LIVE_BYTES = new AtomicLong();

    private Buffers() {
    }

    static long allocate(long size) {
        long addr = NativeMemory.allocate(Math.max(size, 1), NativeMemory.PAGE);
        LIVE.incrementAndGet();
        LIVE_BYTES.addAndGet(Math.max(size, 1));
        return addr;
    }

    static void free(long addr, long size) {
        NativeMemory.free(addr);
        LIVE.decrementAndGet();
        LIVE_BYTES.addAndGet(-Math.max(size, 1));
    }

    static long live() {
        return LIVE.get();
    }

    static long liveBytes() {
        return LIVE_BYTES.get();
    }

    /** Fills {@code [addr, addr+size)} with bytes from {@code seed} (the same seed, the same bytes). */
    static void fillRandom(long addr, long size, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long off = 0;
        for (; off + 8 <= size; off += 8) {
            NativeMemory.putLong(addr + off, r.nextLong());
        }
        for (; off < size; off++) {
            NativeMemory.putByte(addr + off, (byte) r.nextInt());
        }
    }

    static void fill(long addr, long size, byte value) {
        NativeMemory.fill(addr, size, value);
    }

    /** CRC32C of a native range (direct view: no copy). */
    static long crc(long addr, long size) {
        CRC32C crc = new CRC32C();
        ByteBuffer view = NativeMemory.newView();
        for (long off = 0; off < size; off += 1 << 30) {
            int n = (int) Math.min(1 << 30, size - off);
            crc.update(NativeMemory.retarget(view, addr + off, n));
        }
        return crc.getValue();
    }

    static byte[] read(long addr, int size) {
        byte[] out = new byte[size];
        NativeMemory.get(addr, out, 0, size);
        return out;
    }

    /** Offset of the first byte that differs, or -1 if the ranges are equal. */
    static long firstDifference(long a, long b, long size) {
        long off = 0;
        for (; off + 8 <= size; off += 8) {
            if (NativeMemory.getLong(a + off) != NativeMemory.getLong(b + off)) {
                break;
            }
        }
        for (; off < size; off++) {
            if (NativeMemory.getByte(a + off) != NativeMemory.getByte(b + off)) {
                return off;
            }
        }
        return -1;
    }
}
