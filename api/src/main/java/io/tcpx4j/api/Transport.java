package io.tcpx4j.api;

/**
 * A network transport an engine moves bytes over, made by a transport module ({@code LoopbackTransport},
 * {@code TcpxTransport}) and handed to {@link TransferEngines#create(EngineConfig, Transport)}, which owns it
 * from then on. Applications hold it only to pass it on: its operations are the engine's business and are
 * declared by the engine's SPI, which extends this type.
 */
public interface Transport extends AutoCloseable {

    /** Short name, e.g. {@code loopback} or {@code tcpx}. */
    String name();

    /** Frees the transport and everything it holds. Idempotent. */
    @Override
    void close();
}
