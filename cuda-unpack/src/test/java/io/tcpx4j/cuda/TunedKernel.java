package io.tcpx4j.cuda;

import jcuda.Pointer;
import jcuda.driver.CUstream;

import java.util.ArrayList;
import java.util.List;

/**
 * An {@link UnpackKernel} for tests and UnpackBench: the unit size and block size can be fixed
 * instead of chosen, and it records its launches, so that the last one can be replayed and described.
 *
 * <p><b>Not thread-safe.</b>
 */
final class TunedKernel extends UnpackKernel {

    private int unit;
    private int block;
    private int lastUnit;
    private int lastGrid;
    private int lastBlock;
    private Pointer lastParams;
    private long lastNativeParams;
    private final List<CUstream> streams = new ArrayList<>();

    /** The shipped kernel, or {@code ptx} where not null. */
    TunedKernel(CudaDeviceMemory memory, int device, byte[] ptx) {
        super(memory.contexts(), device, ptx == null ? shippedPtx() : ptx);
    }

    /** Fixes the unit size (records per unit, capped at the kernel's largest), or 0 for the kernel's choice. */
    void fixUnit(int records) {
        if (records < 0 || records > 32) {
            throw new IllegalArgumentException("unit of " + records + " records, not 0..32");
        }
        unit = records;
    }

    /** Launches blocks of {@code threads} (a multiple of 32, at most the kernel's own), or its own for 0. */
    void fixBlock(int threads) {
        int own = super.blockThreads();
        if (threads != 0 && (threads < 32 || threads > own || threads % 32 != 0)) {
            throw new IllegalArgumentException("block of " + threads + " threads (the kernel's own: " + own + ")");
        }
        block = threads;
    }

    @Override
    int unitFor(int records, long bytes) {
        lastUnit = unit > 0 && maxUnit() > 0 ? Math.min(maxUnit(), unit) : super.unitFor(records, bytes);
        return lastUnit;
    }

    @Override
    int blockThreads() {
        return block > 0 ? block : super.blockThreads();
    }

    @Override
    void launch(int grid, int blockThreads, CUstream stream, Pointer params, long nativeParams) {
        super.launch(grid, blockThreads, stream, params, nativeParams);
        lastGrid = grid;
        lastBlock = blockThreads;
        lastParams = params;
        lastNativeParams = nativeParams;
        if (!streams.contains(stream)) {
            streams.add(stream);
        }
    }

    /** How the last launch dealt its records: "unit N, M x T" (unit, blocks x threads). */
    String lastDeal() {
        return lastParams == null ? "no launch" : "unit " + lastUnit + ", " + lastGrid + " x " + lastBlock;
    }

    /** The streams launches went to so far, in first-use order. */
    CUstream[] streams() {
        return streams.toArray(CUstream[]::new);
    }

    /**
     * Launches the last launch again {@code times} times, back to back, taking turns on the streams
     * seen so far (its work list and data must still be valid: after its batch completed and before
     * the unpacker's next add).
     */
    void replayLast(int times) {
        if (lastParams == null) {
            throw new IllegalStateException("nothing launched yet");
        }
        CUstream[] turns = streams();
        for (int i = 0; i < times; i++) {
            super.launch(lastGrid, lastBlock, turns[i % turns.length], lastParams, lastNativeParams);
        }
    }
}
