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
 *                            Composition roots pass the engine's chunk size, so that one engine chunk
 *                            is one plugin scheduling unit.
 * @param probeInChildProcess call the plugin's init first in a short-lived child JVM, because TCPX's
 *                            init calls exit(1) when the CUDA driver fails to initialise; only when
 *                            the child succeeded is init called in this JVM
 * @param probeTimeout        how long the child probe may take (TCPX's init opens CUDA and reads sysfs)
 * @param setupTimeout        how long one connect (per handle) or accept (per listener) may take, counted
 *                            from its first call; the plugin's connect and accept run on a set-up
 *                            thread, so a plugin whose calls block (nccl-fastsocket's accept waits in
 *                            accept(2)) never blocks the caller. After this long the call fails with a
 *                            BACKEND error naming the plugin and the call. Keep it below the engine's
 *                            connectTimeout so that this error is the one reported.
 */
public record TcpxOptions(String library, long dynamicChunkSize, boolean probeInChildProcess, Duration probeTimeout,
                          Duration setupTimeout) {

    /** The NCCL_DYNAMIC_CHUNK_SIZE default: 512 KiB, the engine's default chunk. */
    public static final long DEFAULT_DYNAMIC_CHUNK_SIZE = 524_288;
    /**
     * Room for TCPX's own set-up: work per socket plus the plugin's pause while RxDM installs flow steering
     * ({@code NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS}, 5 s by default; docs/TCPX.md).
     */
    public static final Duration DEFAULT_SETUP_TIMEOUT = Duration.ofSeconds(20);

    public TcpxOptions {
        Objects.requireNonNull(probeTimeout, "probeTimeout");
        Objects.requireNonNull(setupTimeout, "setupTimeout");
        if (dynamicChunkSize < 0 || dynamicChunkSize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("dynamicChunkSize must be in 0.." + Integer.MAX_VALUE
                    + " (TCPX reads an int), was " + dynamicChunkSize);
        }
        if (setupTimeout.isNegative() || setupTimeout.isZero()) {
            throw new IllegalArgumentException("setupTimeout must be positive, was " + setupTimeout);
        }
    }

    /** Discovery, the 512 KiB chunk default, a child-process probe with a 60 s limit, 20 s per set-up call. */
    public static TcpxOptions defaults() {
        return new TcpxOptions(null, DEFAULT_DYNAMIC_CHUNK_SIZE, true, Duration.ofSeconds(60), DEFAULT_SETUP_TIMEOUT);
    }

    /** The same options with an explicit library path. */
    public TcpxOptions withLibrary(String path) {
        return new TcpxOptions(path, dynamicChunkSize, probeInChildProcess, probeTimeout, setupTimeout);
    }

    public TcpxOptions withProbeInChildProcess(boolean child) {
        return new TcpxOptions(library, dynamicChunkSize, child, probeTimeout, setupTimeout);
    }

    /** The NCCL_DYNAMIC_CHUNK_SIZE to set when unset; 0 leaves the environment alone. */
    public TcpxOptions withDynamicChunkSize(long bytes) {
        return new TcpxOptions(library, bytes, probeInChildProcess, probeTimeout, setupTimeout);
    }

    public TcpxOptions withProbeTimeout(Duration timeout) {
        return new TcpxOptions(library, dynamicChunkSize, probeInChildProcess, timeout, setupTimeout);
    }

    public TcpxOptions withSetupTimeout(Duration timeout) {
        return new TcpxOptions(library, dynamicChunkSize, probeInChildProcess, probeTimeout, timeout);
    }
}
