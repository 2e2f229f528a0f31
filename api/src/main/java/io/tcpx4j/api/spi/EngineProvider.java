package io.tcpx4j.api.spi;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.EngineMemory;
import io.tcpx4j.api.EngineScatterGather;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferEngines;
import io.tcpx4j.api.Transport;

/**
 * What builds and starts engines for {@link TransferEngines}, found through {@link java.util.ServiceLoader}:
 * an implementation names itself in {@code META-INF/services/io.tcpx4j.api.spi.EngineProvider} and has a
 * public constructor without parameters. The engine module (tcpx4j-domain) provides one. Applications do not
 * use this type.
 *
 * <p>Contract of both methods: the arguments are not null (checked by {@link TransferEngines}); the engine
 * returned is started and owns what it was given, so that its {@code close()} closes the transport, then
 * the scatter-gather, then the memory; when the engine cannot be built or started, everything given is
 * closed before the exception propagates. An argument that this provider's engine cannot use (a transport
 * made for another engine) fails with {@link io.tcpx4j.api.TransferException.Code#INVALID_PARAM}, and is
 * closed too.
 *
 * <p>Implementations are thread-safe.
 */
public interface EngineProvider {

    /** A started engine over {@code transport} that moves host memory (copies and gathers by the CPU). */
    TransferEngine create(EngineConfig config, Transport transport);

    /** A started engine over {@code transport} whose memory and scatter-gather are the caller's. */
    TransferEngine create(EngineConfig config, Transport transport, EngineMemory memory,
                          EngineScatterGather scatterGather);
}
