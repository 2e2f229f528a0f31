package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;

import java.util.List;

/**
 * What one bench run does, after defaults are applied and flags validated.
 *
 * @param transport        transport of both engines
 * @param mode             embedded (both engines here), initiator or target, or a worker of a fleet run
 * @param op               WRITE (initiator pushes) or READ (initiator pulls)
 * @param memory           DRAM or VRAM, on both sides
 * @param blockSizes       bytes per descriptor, in run order
 * @param batchSizes       descriptors per transfer, in run order
 * @param iterations       measured transfers per row; 0 = scaled by size ({@link #iterationsFor})
 * @param warmup           unmeasured transfers before each row; -1 = a tenth of the iterations
 * @param warmupSeconds    before the first row, unmeasured transfers of every row's shape, each shape
 *                         for an equal share of this time (0: none)
 * @param checkConsistency fill the source with pattern data and check every destination byte per row
 * @param channels         data channels per connection
 * @param chunkSize        bytes per chunk on the wire
 * @param bindHost         interface of this side's engine listener and loopback sockets
 * @param callerProgress   the bench thread drives the initiator engine while it waits
 * @param reversed         descriptor i of a batch covers block {@code batch-1-i} of the buffers on both
 *                         sides: no descriptor follows its predecessor in memory (KV-cache blocks that are
 *                         not adjacent); else block i (adjacent)
 */
record BenchSettings(TransportKind transport, Mode mode, Op op, MemoryKind memory, List<Long> blockSizes,
                     List<Integer> batchSizes, int iterations, int warmup, double warmupSeconds,
                     boolean checkConsistency,
                     int channels, int chunkSize, String bindHost, boolean callerProgress,
                     boolean reversed) {

    /**
     * Bytes moved per row when iterations are scaled by size: about 0.5 s per row at 1 GB/s, so the
     * default eight rows finish in well under a minute even on a busy 2-core machine.
     */
    static final long TARGET_BYTES_PER_ROW = 512L << 20;
    static final int MIN_ITERATIONS = 8;
    static final int MAX_ITERATIONS = 2000;

    enum Mode { EMBEDDED, INITIATOR, TARGET, FLEET }

    enum Op { READ, WRITE }

    BenchSettings {
        blockSizes = List.copyOf(blockSizes);
        batchSizes = List.copyOf(batchSizes);
    }

    /** Measured iterations for one row. */
    int iterationsFor(long blockSize, int batchSize) {
        if (iterations > 0) {
            return iterations;
        }
        long perTransfer = blockSize * batchSize;
        long n = TARGET_BYTES_PER_ROW / Math.max(1, perTransfer);
        return (int) Math.max(MIN_ITERATIONS, Math.min(MAX_ITERATIONS, n));
    }

    /** Warm-up iterations for one row. */
    int warmupFor(long blockSize, int batchSize) {
        if (warmup >= 0) {
            return warmup;
        }
        return Math.max(2, Math.min(100, iterationsFor(blockSize, batchSize) / 10));
    }

    /** Bytes each side needs: the largest block times the largest batch. */
    long bufferBytes() {
        long block = blockSizes.stream().mapToLong(Long::longValue).max().orElse(0);
        int batch = batchSizes.stream().mapToInt(Integer::intValue).max().orElse(0);
        return block * batch;
    }
}
