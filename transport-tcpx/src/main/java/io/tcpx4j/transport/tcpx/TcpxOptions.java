package io.tcpx4j.transport.tcpx;

import java.time.Duration;
import java.util.Objects;

/**
 * How the TCPX transport finds and starts the plugin.
 *
 * @param library             the plugin's path, or null to discover it (system property
 *                            {@code tcpx4j.tcpx.library}, env {@code TCPX4J_NET_PLUGIN}, NCCL_NET_PLUGIN
 *                            naming, libnccl-net.so, the A3 install paths)
 * @param dynamicChunkSize    value for {@code NCCL_DYNAMIC_CHUNK_SIZE} when the environment has none:
 *                            with it unset TCPX transfers hang. Set before the plugin's init; an
 *                            existing value is never overridden. 0 leaves the environment alone.
 * @param probeInChildProcess call the plugin's init first in a short-lived child JVM, because TCPX's
 *                            init calls exit(1) when the CUDA driver fails to initialise; only when
 *                            the child succeeded is init called in this JVM
 * @param probeTimeout        how long the child probe may take (TCPX's init opens CUDA and reads sysfs)
 */
public record TcpxOptions(String library, long dynamicChunkSize, boolean probeInChildProcess, Duration probeTimeout) {

    /** The NCCL_DYNAMIC_CHUNK_SIZE default: 512 KiB, the engine's default chunk. */
    public static final long DEFAULT_DYNAMIC_CHUNK_SIZE = 524_288;

    public TcpxOptions {
        Objects.requireNonNull(probeTimeout, "probeTimeout");
        if (dynamicChunkSize < 0) {
            throw new IllegalArgumentException("negative dynamicChunkSize " + dynamicChunkSize);
        }
    }

    /** Discovery, the 512 KiB chunk default, a child-process probe with a 60 s limit. */
    public static TcpxOptions defaults() {
        return new TcpxOptions(null, DEFAULT_DYNAMIC_CHUNK_SIZE, true, Duration.ofSeconds(60));
    }

    /** The same options with an explicit library path. */
    public TcpxOptions withLibrary(String path) {
        return new TcpxOptions(path, dynamicChunkSize, probeInChildProcess, probeTimeout);
    }

    public TcpxOptions withProbeInChildProcess(boolean child) {
        return new TcpxOptions(library, dynamicChunkSize, child, probeTimeout);
    }
}
