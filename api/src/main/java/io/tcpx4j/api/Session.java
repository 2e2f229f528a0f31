package io.tcpx4j.api;

import java.util.List;

/**
 * Transfers with one peer. Obtained from {@link TransferEngine#session(String)}; cheap, thread-safe,
 * and valid for as long as the engine is open.
 *
 * <p>Descriptor lists pair up: {@code local.get(i)} and {@code remote.get(i)} must have the same
 * length. Local ranges must lie in memory registered with this engine, remote ranges in memory whose
 * metadata was loaded with {@link TransferEngine#loadRemoteMetadata(String, byte[])}. A violation is
 * reported at once with a {@link TransferException} (INVALID_PARAM, MISMATCH, NOT_FOUND or
 * NOT_ALLOWED); nothing is sent.
 */
public interface Session {

    /** The peer's name. */
    String peer();

    /**
     * Copies local ranges into the peer's memory. If {@code notification} is non-null the peer
     * receives it exactly once, after every byte has landed.
     */
    Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification);

    /**
     * Copies the peer's ranges into local memory. If {@code notification} is non-null the peer
     * receives it exactly once, after every byte has landed here.
     */
    Transfer read(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification);

    /** Sends a notification with no data. Delivery order with the session's transfers is not defined. */
    void notify(byte[] message);
}
