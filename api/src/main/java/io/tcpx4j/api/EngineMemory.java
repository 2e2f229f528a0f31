package io.tcpx4j.api;

/**
 * How an engine reaches memory besides the network (pointer kinds, allocations, copies), made by a memory
 * module such as cuda-unpack's {@code CudaDeviceMemory} for GPU memory and handed to
 * {@link TransferEngines#create(EngineConfig, Transport, EngineMemory, EngineScatterGather)}, which owns it from
 * then on. Without one an engine reaches host memory only. Its operations are declared by the engine's SPI,
 * which extends this type.
 */
public interface EngineMemory extends AutoCloseable {

    /** Frees what it holds. Idempotent. */
    @Override
    void close();
}
