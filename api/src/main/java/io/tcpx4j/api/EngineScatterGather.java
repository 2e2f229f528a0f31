package io.tcpx4j.api;

/**
 * How an engine scatters received chunks into their destinations and gathers packed chunks before their
 * send, made by a memory module such as cuda-unpack's {@code CudaScatterGather} (a GPU kernel) and handed to
 * {@link TransferEngines#create(EngineConfig, Transport, EngineMemory, EngineScatterGather)}, which owns it
 * from then on. Without one the engine's CPU copies. Its operations are declared by the engine's SPI, which
 * extends this type.
 */
public interface EngineScatterGather extends AutoCloseable {

    /** Frees what it holds. Idempotent. */
    @Override
    void close();
}
