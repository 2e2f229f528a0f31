package io.tcpx4j.domain.testing;

import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;

import java.util.SplittableRandom;

/**
 * The bounce area of one receiving comm in devmem mode: {@code pages} 4-KiB pages in one native
 * reservation (so every page has a u32 offset from {@link #base}, as TCPX's bounce buffer does) and
 * one fragment table per request slot.
 *
 * <p>Pages are handed out at random, so a receive's pages are scattered and out of order. Returned
 * pages and tables are poisoned: an engine that reads a receive's bounce data or fragments after
 * consuming it gets garbage (pages) or fragments the unpacker rejects (tables), never stale data that
 * happens to look right.
 *
 * <p><b>Not thread-safe</b>: guarded by the lock of the {@link CommPair} it belongs to.
 */
final class BouncePool {

    /** Byte written over returned pages: not 0, so a stale read does not pass for zeroed data. */
    static final byte PAGE_POISON = (byte) 0xDB;
    /** Byte written over returned tables: 0xFFFFFFFF lengths that {@code CpuScatterGather} rejects. */
    static final byte TABLE_POISON = (byte) 0xFF;

    private static final long TABLE_BYTES = (long) NetRequest.MAX_FRAGMENTS * NetRequest.FRAGMENT_BYTES;

    final long base;
    final int pages;
    private final long tables;
    private final int[] freePages;
    private int freePageCount;
    private final int[] freeTables = new int[NetTransport.MAX_REQUESTS];
    private int freeTableCount;

    BouncePool(int pages) {
        this.pages = pages;
        // Untouched pages cost address space only; poisoning up front would touch them all.
        this.base = NativeMemory.allocate((long) pages * NativeMemory.PAGE, NativeMemory.PAGE);
        this.tables = NativeMemory.allocate(TABLE_BYTES * NetTransport.MAX_REQUESTS, NetRequest.FRAGMENT_BYTES);
        NativeMemory.fill(tables, TABLE_BYTES * NetTransport.MAX_REQUESTS, TABLE_POISON);
        this.freePages = new int[pages];
        for (int i = 0; i < pages; i++) {
            freePages[i] = i;
        }
        freePageCount = pages;
        for (int i = 0; i < freeTables.length; i++) {
            freeTables[i] = i;
        }
        freeTableCount = freeTables.length;
    }

    int freePages() {
        return freePageCount;
    }

    /** A random free page (index); the caller checked {@link #freePages()}. */
    int takePage(SplittableRandom random) {
        int i = random.nextInt(freePageCount);
        int page = freePages[i];
        freePages[i] = freePages[--freePageCount];
        return page;
    }

    long pageAddress(int page) {
        return base + (long) page * NativeMemory.PAGE;
    }

    void returnPage(int page) {
        NativeMemory.fill(pageAddress(page), NativeMemory.PAGE, PAGE_POISON);
        freePages[freePageCount++] = page;
    }

    /** A free table; there is always one because at most 16 receives of a comm hold one. */
    int takeTable() {
        if (freeTableCount == 0) {
            throw new IllegalStateException("more than " + NetTransport.MAX_REQUESTS + " fragment tables taken");
        }
        return freeTables[--freeTableCount];
    }

    long tableAddress(int table) {
        return tables + table * TABLE_BYTES;
    }

    void returnTable(int table) {
        NativeMemory.fill(tableAddress(table), TABLE_BYTES, TABLE_POISON);
        freeTables[freeTableCount++] = table;
    }

    int pagesHeld() {
        return pages - freePageCount;
    }

    void free() {
        NativeMemory.free(base);
        NativeMemory.free(tables);
    }
}
