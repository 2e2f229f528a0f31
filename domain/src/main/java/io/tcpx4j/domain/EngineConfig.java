package io.tcpx4j.domain;

import io.tcpx4j.api.TransferException;

import javax.net.ssl.SSLContext;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Engine settings. Every knob is documented in README.md ("Configuration").
 *
 * @param name            this engine's (agent's) name; 1..255 UTF-8 bytes
 * @param listenHost      interface the control listener binds, e.g. 127.0.0.1 (default) or 0.0.0.0
 * @param listenPort      control listener port; 0 picks a free one. With several {@code agents}, agent i
 *                        listens on {@code listenPort + i} (0: each on a free port)
 * @param advertiseHost   host peers dial, written into conn-info; null means {@code listenHost}
 * @param channels        data channels per connection (one send and one receive comm each way)
 * @param channelDevices  network device of channel c is {@code channelDevices[c % size]}; empty means
 *                        {@code c % deviceCount}
 * @param chunkSize       bytes per chunk, 1 .. 4 MiB (TCPX holds at most 2048 4-KiB pages per receive)
 * @param sendWindow      outstanding sends per comm, 1 .. 16
 * @param recvWindow      outstanding (posted or unconsumed) receives per comm, 1 .. 16
 * @param peerTimeout     a connected peer silent this long is declared dead (REMOTE_DISCONNECT)
 * @param connectTimeout  a connection not fully up after this long fails its transfers
 * @param heartbeat       interval of keep-alive frames on an idle control stream
 * @param shutdownTimeout longest {@code close()} waits for graceful disconnects
 * @param progress        who drives the progress agents (a thread each, or the application's threads) and how
 *                        long an idle driver spins before it blocks in the kernel ({@link Progress})
 * @param controlTls      TLS for the control stream, or null for plain TCP (the default); the context
 *                        serves both roles (its key manager for accepted streams, its trust manager for
 *                        dialed ones, which also check the conn-info host against the certificate). Both
 *                        ends must use TLS or neither. The data channels are the transport's and stay as
 *                        they are.
 * @param controlTlsClientAuth whether accepted TLS streams require a client certificate the context trusts
 * @param inlineLimit     a transfer of at most this many bytes in total, between host memory on both sides,
 *                        travels inside its control frame (one round trip, no data channel); 0 never,
 *                        at most {@link #MAX_INLINE}
 * @param coalesceLimit   descriptors of host memory of at most this many bytes (and at most {@code chunkSize})
 *                        travel packed with their neighbours in shared chunks of at most 128 KiB, through
 *                        staging buffers copied by the CPU where they do not lie back to back, when each
 *                        side's descriptors are of one kind its unpacker reaches; 0 never, at most
 *                        {@link #MAX_CHUNK}
 * @param deviceCoalesceLimit the same for device memory, in shared chunks of at most 512 KiB gathered and
 *                        scattered by the unpack kernel; a transfer between host and device memory packs
 *                        as host memory does (the smaller limit and chunk); 0 never, at most {@link #MAX_CHUNK}
 * @param agents          progress agents, each with its own control listener (and thread, where {@code progress}
 *                        says so) that serves the peers
 *                        whose names hash to it (with their connections, transfers and notifications);
 *                        1 .. {@link #MAX_AGENTS}. One agent serves every peer of the engine; a target that
 *                        many initiators write into spreads them over several
 */
public record EngineConfig(String name, String listenHost, int listenPort, String advertiseHost, int channels,
                           List<Integer> channelDevices, int chunkSize, int sendWindow, int recvWindow,
                           Duration peerTimeout, Duration connectTimeout, Duration heartbeat,
                           Duration shutdownTimeout, Progress progress, SSLContext controlTls,
                           boolean controlTlsClientAuth, int inlineLimit, int coalesceLimit,
                           int deviceCoalesceLimit, int agents) {

    public static final int DEFAULT_CHUNK = 512 * 1024;
    public static final int MAX_CHUNK = 4 * 1024 * 1024;
    public static final int DEFAULT_INLINE = 32 * 1024;
    public static final int MAX_INLINE = 1024 * 1024;
    public static final int DEFAULT_COALESCE = 32 * 1024;
    public static final int DEFAULT_DEVICE_COALESCE = 128 * 1024;
    public static final int MAX_AGENTS = 64;

    public EngineConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(listenHost, "listenHost");
        channelDevices = List.copyOf(channelDevices);
        Objects.requireNonNull(peerTimeout, "peerTimeout");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(heartbeat, "heartbeat");
        Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
        Objects.requireNonNull(progress, "progress");
        int nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        require(nameBytes >= 1 && nameBytes <= 255, "name must be 1..255 UTF-8 bytes");
        require(listenPort >= 0 && listenPort <= 65535, "listenPort must be 0..65535");
        require(channels >= 1 && channels <= 64, "channels must be 1..64");
        require(chunkSize >= 1 && chunkSize <= MAX_CHUNK, "chunkSize must be 1.." + MAX_CHUNK);
        require(sendWindow >= 1 && sendWindow <= 16, "sendWindow must be 1..16");
        require(recvWindow >= 1 && recvWindow <= 16, "recvWindow must be 1..16");
        require(!peerTimeout.isNegative() && !peerTimeout.isZero(), "peerTimeout must be positive");
        require(!connectTimeout.isNegative() && !connectTimeout.isZero(), "connectTimeout must be positive");
        require(!heartbeat.isNegative() && !heartbeat.isZero(), "heartbeat must be positive");
        require(heartbeat.compareTo(peerTimeout) < 0, "heartbeat must be shorter than peerTimeout");
        require(!shutdownTimeout.isNegative(), "shutdownTimeout must not be negative");
        for (Integer d : channelDevices) {
            require(d != null && d >= 0, "channelDevices must be non-negative");
        }
        require(controlTls != null || !controlTlsClientAuth, "controlTlsClientAuth needs controlTls");
        require(inlineLimit >= 0 && inlineLimit <= MAX_INLINE, "inlineLimit must be 0.." + MAX_INLINE);
        require(coalesceLimit >= 0 && coalesceLimit <= MAX_CHUNK, "coalesceLimit must be 0.." + MAX_CHUNK);
        require(deviceCoalesceLimit >= 0 && deviceCoalesceLimit <= MAX_CHUNK,
                "deviceCoalesceLimit must be 0.." + MAX_CHUNK);
        require(agents >= 1 && agents <= MAX_AGENTS, "agents must be 1.." + MAX_AGENTS);
        require(listenPort == 0 || listenPort + agents - 1 <= 65535, "listenPort + agents - 1 must be at most 65535");
    }

    /**
     * Defaults: loopback control listener, 2 channels, 512 KiB chunks, send window 12, a progress thread per agent
     * that spins briefly and then blocks,
     * host-to-host transfers up to 32 KiB inline, descriptors up to 32 KiB of host memory and up to
     * 128 KiB of device memory packed into shared chunks.
     */
    public static EngineConfig defaults(String name) {
        return new EngineConfig(name, "127.0.0.1", 0, null, 2, List.of(), DEFAULT_CHUNK, 12, 16,
                Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(5),
                Progress.defaults(), null, false, DEFAULT_INLINE, DEFAULT_COALESCE, DEFAULT_DEVICE_COALESCE, 1);
    }

    public EngineConfig withName(String v) {
        return new EngineConfig(v, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withListen(String host, int port) {
        return new EngineConfig(name, host, port, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withAdvertiseHost(String v) {
        return new EngineConfig(name, listenHost, listenPort, v, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withChannels(int v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, v, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withChannelDevices(List<Integer> v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, v, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withChunkSize(int v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, v,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withWindows(int send, int recv) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                send, recv, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress, controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withTimeouts(Duration peer, Duration connect, Duration beat) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peer, connect, beat, shutdownTimeout, progress, controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withShutdownTimeout(Duration v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, v, progress, controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    /** Who drives the progress agents and how long an idle driver spins before it blocks ({@link Progress}). */
    public EngineConfig withProgress(Progress v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, v,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    /**
     * TLS on the control stream with {@code context} (null: plain TCP); {@code requireClientAuth} makes
     * accepted streams demand a client certificate.
     */
    public EngineConfig withControlTls(SSLContext context, boolean requireClientAuth) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                context, requireClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withInlineLimit(int v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, v, coalesceLimit, deviceCoalesceLimit, agents);
    }

    public EngineConfig withCoalesceLimit(int v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, v, deviceCoalesceLimit, agents);
    }

    public EngineConfig withDeviceCoalesceLimit(int v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, v, agents);
    }

    public EngineConfig withAgents(int v) {
        return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, v);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, message);
        }
    }
}
