package io.tcpx4j.transport.loopback;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The 4 KiB bounce pages of one receive comm, handed out in a shuffled order so that consecutive
 * pieces of a receive land far apart, as devmem pages from a NIC's RX queue do. Running out is
 * back-pressure (the irecv reports BUSY), never a wait.
 *
 * <p><b>Not thread-safe</b>: used by the comm's caller thread (irecv, consumed).
 */
final class BouncePool {

    static final int PAGE = 4096;

    final long base;
    /** Bytes of the pool from {@link #base}. */
    final long bytes;
    private final int[] free;
    private int top;

    BouncePool(long base, int pages) {
        this.base = base;
        this.bytes = (long) pages * PAGE;
        this.free = new int[pages];
        for (int i = 0; i < pages; i++) {
            free[i] = i;
        }
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = pages - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = free[i];
            free[i] = free[j];
            free[j] = t;
        }
        top = pages;
    }

    /** Takes {@code n} pages into {@code out}, or none and false if fewer are free. */
    boolean acquire(int n, int[] out) {
        if (n > top) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            out[i] = free[--top];
        }
        return true;
    }

    void release(int[] pages, int n) {
        for (int i = 0; i < n; i++) {
            free[top++] = pages[i];
        }
    }
}
