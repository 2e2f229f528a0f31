package io.tcpx4j.api;

import javax.net.ssl.SSLContext;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * An engine's settings. Start from {@link #defaults(String)} and change what differs with the
 * {@code withX} methods, or use a {@link #builder(String) builder}. Every value is checked when the
 * configuration is made: a bad one fails with {@link TransferException} code {@code INVALID_PARAM} naming
 * the rule. Immutable and thread-safe. README.md ("Configuration") has a line per knob, docs/CONFIG.md the
 * details.
 *
 * @param name            this engine's (agent's) name; 1..255 UTF-8 bytes
 * @param listenHost      interface the control listener binds, e.g. 127.0.0.1 (default) or 0.0.0.0
 * @param listenPort      control listener port; 0 picks a free one. With several {@code agents}, agent i
 *                        listens on {@code listenPort + i} (0: each on a free port)
 * @param advertiseHost   host peers dial, written into conn-info; null means {@code listenHost}
 * @param channels        data channels per connection (one send and one receive comm each way), 1..64
 * @param channelDevices  network device of channel c is {@code channelDevices[c % size]}; empty means
 *                        {@code c % deviceCount}
 * @param chunkSize       bytes per chunk, 1 .. 4 MiB (TCPX holds at most 2048 4-KiB pages per receive)
 * @param sendWindow      outstanding sends per comm, 1 .. 16
 * @param recvWindow      outstanding (posted or unconsumed) receives per comm, 1 .. 16
 * @param peerTimeout     a connected peer silent this long is declared dead (REMOTE_DISCONNECT)
 * @param connectTimeout  a connection not fully up after this long fails its transfers
 * @param heartbeat       interval of keep-alive frames on an idle control stream, shorter than {@code peerTimeout}
 * @param shutdownTimeout longest {@code close()} waits for each progress agent to stop
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
 *                        says so) that serves the peers whose names hash to it (with their connections,
 *                        transfers and notifications); 1 .. {@link #MAX_AGENTS}
 * @param warmUpTransfers transfers the engine runs between two private engines of the same configuration,
 *                        transport and memory in the background when it starts, so that the JIT has compiled
 *                        both sides' transfer paths before the first real transfer; 0 none (the default), at
 *                        most {@link #MAX_WARM_UP_TRANSFERS}
 */
public record EngineConfig(String name, String listenHost, int listenPort, String advertiseHost, int channels,
                           List<Integer> channelDevices, int chunkSize, int sendWindow, int recvWindow,
                           Duration peerTimeout, Duration connectTimeout, Duration heartbeat,
                           Duration shutdownTimeout, Progress progress, SSLContext controlTls,
                           boolean controlTlsClientAuth, int inlineLimit, int coalesceLimit,
                           int deviceCoalesceLimit, int agents, int warmUpTransfers) {

    public static final int DEFAULT_CHUNK = 512 * 1024;
    public static final int MAX_CHUNK = 4 * 1024 * 1024;
    public static final int DEFAULT_INLINE = 32 * 1024;
    public static final int MAX_INLINE = 1024 * 1024;
    public static final int DEFAULT_COALESCE = 32 * 1024;
    public static final int DEFAULT_DEVICE_COALESCE = 128 * 1024;
    public static final int MAX_AGENTS = 64;
    /** Enough transfers of the warm-up's mix for the JIT to compile both sides' paths (serve's and NIXL's default). */
    public static final int DEFAULT_WARM_UP_TRANSFERS = 3000;
    public static final int MAX_WARM_UP_TRANSFERS = 1_000_000;

    /** Checks every value (INVALID_PARAM naming the rule). */
    public EngineConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(listenHost, "listenHost");
        channelDevices = List.copyOf(channelDevices);
        Objects.requireNonNull(peerTimeout, "peerTimeout");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(heartbeat, "heartbeat");
        Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
        Objects.requireNonNull(progress, "progress");
        int nameBytes = name.getBytes(StandardCharsets.UTF_8).length;
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
            require(d >= 0, "channelDevices must be non-negative");
        }
        require(controlTls != null || !controlTlsClientAuth, "controlTlsClientAuth needs controlTls");
        require(inlineLimit >= 0 && inlineLimit <= MAX_INLINE, "inlineLimit must be 0.." + MAX_INLINE);
        require(coalesceLimit >= 0 && coalesceLimit <= MAX_CHUNK, "coalesceLimit must be 0.." + MAX_CHUNK);
        require(deviceCoalesceLimit >= 0 && deviceCoalesceLimit <= MAX_CHUNK,
                "deviceCoalesceLimit must be 0.." + MAX_CHUNK);
        require(agents >= 1 && agents <= MAX_AGENTS, "agents must be 1.." + MAX_AGENTS);
        require(listenPort == 0 || listenPort + agents - 1 <= 65535, "listenPort + agents - 1 must be at most 65535");
        require(warmUpTransfers >= 0 && warmUpTransfers <= MAX_WARM_UP_TRANSFERS,
                "warmUpTransfers must be 0.." + MAX_WARM_UP_TRANSFERS);
    }

    /**
     * Defaults: loopback control listener on a free port, 2 channels, 512 KiB chunks, send window 12, receive
     * window 16, a progress thread per agent that spins briefly and then blocks, host-to-host transfers up to
     * 32 KiB inline, descriptors up to 32 KiB of host memory and up to 128 KiB of device memory packed into
     * shared chunks, one agent, no TLS, no warm-up.
     */
    public static EngineConfig defaults(String name) {
        return builder(name).build();
    }

    /** A builder that starts from {@link #defaults(String)}. */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A builder that starts from this configuration. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    public EngineConfig withName(String v) {
        return toBuilder().name(v).build();
    }

    public EngineConfig withListen(String host, int port) {
        return toBuilder().listen(host, port).build();
    }

    public EngineConfig withAdvertiseHost(String v) {
        return toBuilder().advertiseHost(v).build();
    }

    public EngineConfig withChannels(int v) {
        return toBuilder().channels(v).build();
    }

    public EngineConfig withChannelDevices(List<Integer> v) {
        return toBuilder().channelDevices(v).build();
    }

    public EngineConfig withChunkSize(int v) {
        return toBuilder().chunkSize(v).build();
    }

    public EngineConfig withWindows(int send, int recv) {
        return toBuilder().windows(send, recv).build();
    }

    public EngineConfig withTimeouts(Duration peer, Duration connect, Duration beat) {
        return toBuilder().timeouts(peer, connect, beat).build();
    }

    public EngineConfig withShutdownTimeout(Duration v) {
        return toBuilder().shutdownTimeout(v).build();
    }

    /** Who drives the progress agents and how long an idle driver spins before it blocks ({@link Progress}). */
    public EngineConfig withProgress(Progress v) {
        return toBuilder().progress(v).build();
    }

    /**
     * TLS on the control stream with {@code context} (null: plain TCP); {@code requireClientAuth} makes
     * accepted streams demand a client certificate.
     */
    public EngineConfig withControlTls(SSLContext context, boolean requireClientAuth) {
        return toBuilder().controlTls(context, requireClientAuth).build();
    }

    public EngineConfig withInlineLimit(int v) {
        return toBuilder().inlineLimit(v).build();
    }

    public EngineConfig withCoalesceLimit(int v) {
        return toBuilder().coalesceLimit(v).build();
    }

    public EngineConfig withDeviceCoalesceLimit(int v) {
        return toBuilder().deviceCoalesceLimit(v).build();
    }

    public EngineConfig withAgents(int v) {
        return toBuilder().agents(v).build();
    }

    /** Warm-up transfers run in the background when the engine starts; 0 none. */
    public EngineConfig withWarmUp(int transfers) {
        return toBuilder().warmUp(transfers).build();
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, message);
        }
    }

    /**
     * Collects settings for an {@link EngineConfig}; {@link #build()} checks them. Starts from the defaults
     * (or from a configuration's values, {@link EngineConfig#toBuilder()}). <b>Not thread-safe.</b>
     */
    public static final class Builder {
        private String name;
        private String listenHost = "127.0.0.1";
        private int listenPort;
        private String advertiseHost;
        private int channels = 2;
        private List<Integer> channelDevices = List.of();
        private int chunkSize = DEFAULT_CHUNK;
        private int sendWindow = 12;
        private int recvWindow = 16;
        private Duration peerTimeout = Duration.ofSeconds(5);
        private Duration connectTimeout = Duration.ofSeconds(30);
        private Duration heartbeat = Duration.ofSeconds(1);
        private Duration shutdownTimeout = Duration.ofSeconds(5);
        private Progress progress = Progress.defaults();
        private SSLContext controlTls;
        private boolean controlTlsClientAuth;
        private int inlineLimit = DEFAULT_INLINE;
        private int coalesceLimit = DEFAULT_COALESCE;
        private int deviceCoalesceLimit = DEFAULT_DEVICE_COALESCE;
        private int agents = 1;
        private int warmUpTransfers;

        private Builder(String name) {
            this.name = name;
        }

        private Builder(EngineConfig c) {
            name = c.name;
            listenHost = c.listenHost;
            listenPort = c.listenPort;
            advertiseHost = c.advertiseHost;
            channels = c.channels;
            channelDevices = c.channelDevices;
            chunkSize = c.chunkSize;
            sendWindow = c.sendWindow;
            recvWindow = c.recvWindow;
            peerTimeout = c.peerTimeout;
            connectTimeout = c.connectTimeout;
            heartbeat = c.heartbeat;
            shutdownTimeout = c.shutdownTimeout;
            progress = c.progress;
            controlTls = c.controlTls;
            controlTlsClientAuth = c.controlTlsClientAuth;
            inlineLimit = c.inlineLimit;
            coalesceLimit = c.coalesceLimit;
            deviceCoalesceLimit = c.deviceCoalesceLimit;
            agents = c.agents;
            warmUpTransfers = c.warmUpTransfers;
        }

        public Builder name(String v) {
            name = v;
            return this;
        }

        public Builder listen(String host, int port) {
            listenHost = host;
            listenPort = port;
            return this;
        }

        public Builder advertiseHost(String v) {
            advertiseHost = v;
            return this;
        }

        public Builder channels(int v) {
            channels = v;
            return this;
        }

        public Builder channelDevices(List<Integer> v) {
            channelDevices = v;
            return this;
        }

        public Builder chunkSize(int v) {
            chunkSize = v;
            return this;
        }

        public Builder windows(int send, int recv) {
            sendWindow = send;
            recvWindow = recv;
            return this;
        }

        public Builder timeouts(Duration peer, Duration connect, Duration beat) {
            peerTimeout = peer;
            connectTimeout = connect;
            heartbeat = beat;
            return this;
        }

        public Builder shutdownTimeout(Duration v) {
            shutdownTimeout = v;
            return this;
        }

        public Builder progress(Progress v) {
            progress = v;
            return this;
        }

        public Builder controlTls(SSLContext context, boolean requireClientAuth) {
            controlTls = context;
            controlTlsClientAuth = requireClientAuth;
            return this;
        }

        public Builder inlineLimit(int v) {
            inlineLimit = v;
            return this;
        }

        public Builder coalesceLimit(int v) {
            coalesceLimit = v;
            return this;
        }

        public Builder deviceCoalesceLimit(int v) {
            deviceCoalesceLimit = v;
            return this;
        }

        public Builder agents(int v) {
            agents = v;
            return this;
        }

        public Builder warmUp(int transfers) {
            warmUpTransfers = transfers;
            return this;
        }

        /** The configuration; fails with INVALID_PARAM naming the first rule a value breaks. */
        public EngineConfig build() {
            return new EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                    sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                    controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents,
                    warmUpTransfers);
        }
    }
}
