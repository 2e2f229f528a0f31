package io.tcpx4j.api;

/**
 * Memory registered with an engine. Peers may read or write exactly this range, nothing else,
 * once they have loaded its {@link #publicMetadata()}.
 *
 * <p>Thread-safe. {@link #close()} deregisters: new remote accesses are refused at once and the
 * transport registrations are dropped once in-flight accesses have drained.
 */
public interface RegisteredMemory extends AutoCloseable {

    MemoryDescriptor descriptor();

    /**
     * A compact, versioned blob that a peer passes to
     * {@link TransferEngine#loadRemoteMetadata(String, byte[])} to target this memory.
     */
    byte[] publicMetadata();

    /** Deregisters. Idempotent. */
    @Override
    void close();
}
