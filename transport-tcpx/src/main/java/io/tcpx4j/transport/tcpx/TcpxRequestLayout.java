package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;

/**
 * Where a TCPX request (the opaque {@code void*} isend/irecv return) keeps the unpack slot of a
 * receive into CUDA memory. NCCL never reads it: its device code learns the fragment count from the
 * same host-mapped {@code netUnpackMeta} that these pointers point into. We have no device code in
 * the plugin's loop, so we follow the pointers from the request. That is plugin-private layout, so it
 * is versioned here and every read is validated.
 *
 * <p>{@link #X86_64_2024}: google/nccl-plugin-gpudirecttcpx (2024 open-source release), struct
 * {@code tcpxRequest}: eleven leading words (comm*, data*, nine ints) end at 52, so the
 * {@code unpackSlot} member starts at 56: {bool active @56; u64 idx @64; void* mem @72 (fragment
 * records, host-mapped); u64* cnt @80 (host-mapped fragment count)}. The plugin publishes
 * {@code *cnt} when {@code test} reports the receive done and fails hard above 2048 pages.
 */
enum TcpxRequestLayout {
    X86_64_2024(56, 72, 80);

    final int unpackSlot;
    final int fragments;
    final int count;

    TcpxRequestLayout(int unpackSlot, int fragments, int count) {
        this.unpackSlot = unpackSlot;
        this.fragments = fragments;
        this.count = count;
    }

    /** The host address of a completed receive's fragment records. Throws if the layout does not fit. */
    long fragmentsAddress(long request) {
        checkActive(request);
        long mem = NativeMemory.getLong(request + fragments);
        if (mem == 0) {
            throw mismatch("null fragment table");
        }
        return mem;
    }

    /**
     * The fragment count a completed, non-empty receive published. Validated: 0 < count <= 2048
     * (NET_UNPACK_MAX_SLICE_PAGES); anything else means this layout does not describe the loaded
     * plugin.
     */
    int fragmentCount(long request) {
        checkActive(request);
        long cntPtr = NativeMemory.getLong(request + count);
        if (cntPtr == 0) {
            throw mismatch("null fragment-count pointer");
        }
        long cnt = NativeMemory.getLong(cntPtr);
        if (cnt <= 0 || cnt > NativeLayouts.Fragment.MAX_PER_RECEIVE) {
            throw mismatch("fragment count " + cnt + " outside 1.." + NativeLayouts.Fragment.MAX_PER_RECEIVE);
        }
        return (int) cnt;
    }

    /** The slot's {@code bool active} must be exactly 1 for a receive into CUDA memory. */
    private void checkActive(long request) {
        byte active = NativeMemory.getByte(request + unpackSlot);
        if (active != 1) {
            throw mismatch("unpack slot flag " + active + " instead of 1");
        }
    }

    private TransferException mismatch(String what) {
        return new TransferException(TransferException.Code.BACKEND, "TCPX request layout " + this
                + " (unpack slot at " + unpackSlot + ", mem at " + fragments + ", cnt at " + count
                + ") does not match the loaded plugin: " + what
                + "; this plugin build needs a new TcpxRequestLayout entry");
    }
}
