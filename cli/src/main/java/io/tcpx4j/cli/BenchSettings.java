package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.cli.layout.Stripes;

import java.util.List;

/**
 * What one bench run does, after defaults are applied and flags validated.
 *
 * @param transport        transport of both engines
 * @param mode             embedded (both engines here), initiator or target, or a worker of a fleet run
 * @param op               WRITE (initiator pushes) or READ (initiator pulls)
 * @param initiatorMemory  DRAM or VRAM of the initiator's buffer
 * @param targetMemory     DRAM or VRAM of the target's buffer
 * @param blockSizes       bytes per descriptor, in run order
 * @param batchSizes       descriptors per transfer, in run order
 * @param iterations       measured transfers per row, all threads together; 0 = scaled by size
 *                         ({@link #iterationsFor})
 * @param warmup           unmeasured transfers before each row, all threads together; -1 = a tenth of the
 *                         iterations
 * @param warmupSeconds    before the first row, unmeasured transfers of every row's shape, each shape
 *                         for an equal share of this time (0: none)
 * @param warmupBounded    the warm-up also ends once it has made {@link #WARMUP_PER_MEASURED} times as many
 *                         transfers as the run measures (the default, where {@code --warmup-seconds} is not
 *                         given: a short run does not wait for a warm-up sized for long ones)
 * @param checkConsistency fill the source with pattern data and check every destination byte per row
 * @param channels         data channels per connection, as asked
 * @param chunkSize        bytes per chunk on the wire
 * @param bindHost         interface of this side's engine listener and loopback sockets
 * @param callerProgress   the bench threads drive the initiator engine while they wait
 * @param reversed         descriptor i of a batch covers block {@code batch-1-i} of the slot on both
 *                         sides: no descriptor follows its predecessor in memory (KV-cache blocks that are
 *                         not adjacent); else block i (adjacent)
 * @param threads          initiator threads posting transfers, each on slices of its own
 * @param depth            transfers each thread keeps in flight, each on a slice of its own
 * @param initiatorDevices the GPUs the initiator's buffers spread over, in block order, where this process
 *                         holds them and they are GPU memory; else empty
 * @param targetDevices    the same of the target's buffers
 * @param targetDeviceCount the GPUs the target's buffers spread over (1 for host memory); on an initiator the
 *                         number it asks its target for
 */
record BenchSettings(TransportKind transport, Mode mode, Op op, MemoryKind initiatorMemory, MemoryKind targetMemory,
                     List<Long> blockSizes, List<Integer> batchSizes, int iterations, int warmup,
                     double warmupSeconds, boolean warmupBounded, boolean checkConsistency,
                     int channels, int chunkSize, String bindHost, boolean callerProgress,
                     boolean reversed, int threads, int depth, List<Integer> initiatorDevices,
                     List<Integer> targetDevices, int targetDeviceCount) {

    /**
     * Bytes moved per row when iterations are scaled by size: enough transfers of a large block for a steady
     * average, few enough that the default rows end soon on a machine with few, shared CPUs.
     */
    static final long TARGET_BYTES_PER_ROW = 512L << 20;
    static final int MIN_ITERATIONS = 8;
    static final int MAX_ITERATIONS = 2000;
    /** With {@link #warmupBounded}: warm-up transfers per measured transfer of the run, at most. */
    static final int WARMUP_PER_MEASURED = 10;

    enum Mode { EMBEDDED, INITIATOR, TARGET, FLEET }

    enum Op { READ, WRITE }

    BenchSettings {
        blockSizes = List.copyOf(blockSizes);
        batchSizes = List.copyOf(batchSizes);
        initiatorDevices = List.copyOf(initiatorDevices);
        targetDevices = List.copyOf(targetDevices);
        if (threads < 1 || depth < 1) {
            throw new IllegalArgumentException("threads and depth must be at least 1");
        }
        if (targetDeviceCount < 1 || !targetDevices.isEmpty() && targetDevices.size() != targetDeviceCount) {
            throw new IllegalArgumentException(targetDeviceCount + " target GPUs, " + targetDevices + " here");
        }
    }

    /** Settings of a run whose buffers are one per side (host memory, or GPU memory on GPU 0 alone). */
    BenchSettings(TransportKind transport, Mode mode, Op op, MemoryKind initiatorMemory, MemoryKind targetMemory,
                  List<Long> blockSizes, List<Integer> batchSizes, int iterations, int warmup, double warmupSeconds,
                  boolean warmupBounded, boolean checkConsistency, int channels, int chunkSize, String bindHost,
                  boolean callerProgress, boolean reversed, int threads, int depth) {
        this(transport, mode, op, initiatorMemory, targetMemory, blockSizes, batchSizes, iterations, warmup,
                warmupSeconds, warmupBounded, checkConsistency, channels, chunkSize, bindHost, callerProgress, reversed,
                threads, depth, initiatorMemory == MemoryKind.VRAM ? List.of(0) : List.of(),
                targetMemory == MemoryKind.VRAM && mode != Mode.INITIATOR ? List.of(0) : List.of(), 1);
    }

    /**
     * Measured iterations for one row, all threads together: at least one per slot, so that every slot
     * a row checks has been written.
     */
    int iterationsFor(long blockSize, int batchSize) {
        if (iterations > 0) {
            return Math.max(iterations, slots());
        }
        long perTransfer = blockSize * batchSize;
        long n = TARGET_BYTES_PER_ROW / Math.max(1, perTransfer);
        return (int) Math.max(slots(), Math.max(MIN_ITERATIONS, Math.min(MAX_ITERATIONS, n)));
    }

    /** Warm-up iterations for one row, all threads together. */
    int warmupFor(long blockSize, int batchSize) {
        if (warmup >= 0) {
            return warmup;
        }
        return Math.max(2, Math.min(100, iterationsFor(blockSize, batchSize) / 10));
    }

    /** Transfer slots: every thread's every in-flight transfer has a slice of the buffers of its own. */
    int slots() {
        return threads * depth;
    }

    /** Transfers all rows measure together. */
    long measuredTransfers() {
        long n = 0;
        for (int batch : batchSizes) {
            for (long block : blockSizes) {
                n += iterationsFor(block, batch);
            }
        }
        return n;
    }

    /** Bytes each side needs in all: the largest block times the largest batch, once per slot. */
    long bufferBytes() {
        return maxBlock() * maxBatch() * slots();
    }

    /** The GPUs the initiator's buffers spread over, 1 for host memory. */
    int initiatorDeviceCount() {
        return Math.max(1, initiatorDevices.size());
    }

    /** Bytes of each of the initiator's buffers: the largest row's blocks spread over its GPUs. */
    long initiatorBufferBytes() {
        return Stripes.bytesPerBuffer((long) maxBatch() * slots(), maxBlock(), initiatorDeviceCount());
    }

    /** Bytes of each of the target's buffers: the largest row's blocks spread over its GPUs. */
    long targetBufferBytes() {
        return Stripes.bytesPerBuffer((long) maxBatch() * slots(), maxBlock(), targetDeviceCount);
    }

    private long maxBlock() {
        return blockSizes.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    private int maxBatch() {
        return batchSizes.stream().mapToInt(Integer::intValue).max().orElse(0);
    }

    /** The share of {@code total} transfers that thread {@code thread} makes. */
    int shareOf(int total, int thread) {
        return total / threads + (thread < total % threads ? 1 : 0);
    }
}
