package io.tcpx4j.cli.fleet;

import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.cli.layout.Stripes;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What a fleet worker needs of its started engine: the engine, its memory (one buffer of host memory, or
 * one per GPU the worker's role spreads over, laid out as {@link Stripes}), and the pattern fill and check
 * of {@code --check-consistency} (a pure function of seed and offset, the same on every worker). The bench
 * supplies it; the fleet package does not compose engines.
 */
public interface FleetNode extends AutoCloseable {

    TransferEngine engine();

    /** The GPUs this worker's buffers spread over, in block order; empty for host memory. */
    List<Integer> devices();

    /** Allocates one buffer of {@code bytes} of the bench's memory kind per GPU of {@link #devices()}, or one. */
    Stripes allocate(long bytes);

    void free(Stripes buffers);

    /**
     * Writes pattern {@code seed} into blocks {@code [first, first + count)} of a row of {@code block}-byte
     * blocks, block {@code first} being the pattern's start.
     */
    void fill(Stripes buffers, long first, long count, long block, long seed);

    /**
     * Counts the bytes of the blocks {@link #fill} writes that differ from the pattern, and adds the bytes
     * it checked on each GPU (by the ordinal the memory reports) to {@code checkedPerGpu}.
     */
    long verify(Stripes buffers, long first, long count, long block, long seed, Map<Integer, Long> checkedPerGpu);

    /** Waits until the notification {@code message} has arrived and takes it; false on timeout. */
    boolean awaitNotification(byte[] message, Duration timeout);

    /** Waits until no transfer is live in the engine; whether that happened within {@code timeout}. */
    boolean awaitQuiet(Duration timeout);

    /** Stops the engine. */
    @Override
    void close();
}
