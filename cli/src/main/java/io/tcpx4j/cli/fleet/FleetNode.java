package io.tcpx4j.cli.fleet;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.TransferEngine;

import java.time.Duration;

/**
 * What a fleet worker needs of its started engine: the engine, its memory, and the pattern fill and
 * check of {@code --check-consistency} (a pure function of seed and offset, the same on every worker).
 * The bench supplies it; the fleet package does not compose engines.
 */
public interface FleetNode extends AutoCloseable {

    TransferEngine engine();

    /** Allocates {@code bytes} of the bench's memory kind. */
    MemoryDescriptor allocate(long bytes);

    void free(MemoryDescriptor range);

    /** Writes pattern {@code seed} into the first {@code bytes} of {@code region}. */
    void fill(MemoryDescriptor region, long bytes, long seed);

    /** Counts the bytes of the first {@code bytes} of {@code region} that differ from pattern {@code seed}. */
    long verify(MemoryDescriptor region, long bytes, long seed);

    /** Waits until the notification {@code message} has arrived and takes it; false on timeout. */
    boolean awaitNotification(byte[] message, Duration timeout);

    /** Waits until no transfer is live in the engine; whether that happened within {@code timeout}. */
    boolean awaitQuiet(Duration timeout);

    /** Stops the engine. */
    @Override
    void close();
}
