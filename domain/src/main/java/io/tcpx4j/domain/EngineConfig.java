package io.tcpx4j.domain;

import io.tcpx4j.api.Progress;

import javax.net.ssl.SSLContext;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The engine's settings inside the domain: the application's {@link io.tcpx4j.api.EngineConfig} less the
 * warm-up, which only the composition root reads. Each component means what the api record's of the same name
 * does; the rules (and their INVALID_PARAM messages) are the api record's, which this one checks its values
 * through. Made from the application's configuration by {@link #from}.
 */
public record EngineConfig(String name, String listenHost, int listenPort, String advertiseHost, int channels,
                           List<Integer> channelDevices, int chunkSize, int sendWindow, int recvWindow,
                           Duration peerTimeout, Duration connectTimeout, Duration heartbeat,
                           Duration shutdownTimeout, Progress progress, SSLContext controlTls,
                           boolean controlTlsClientAuth, int inlineLimit, int coalesceLimit,
                           int deviceCoalesceLimit, int agents) {

    public static final int DEFAULT_CHUNK = io.tcpx4j.api.EngineConfig.DEFAULT_CHUNK;
    public static final int MAX_CHUNK = io.tcpx4j.api.EngineConfig.MAX_CHUNK;

    /** Checks every value by the api record's rules. */
    public EngineConfig {
        Objects.requireNonNull(progress, "progress");
        channelDevices = api(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize,
                sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress,
                controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents)
                .channelDevices();
    }

    /** The application's configuration as the domain reads it (its warm-up is the composition root's). */
    public static EngineConfig from(io.tcpx4j.api.EngineConfig c) {
        return new EngineConfig(c.name(), c.listenHost(), c.listenPort(), c.advertiseHost(), c.channels(),
                c.channelDevices(), c.chunkSize(), c.sendWindow(), c.recvWindow(), c.peerTimeout(),
                c.connectTimeout(), c.heartbeat(), c.shutdownTimeout(), c.progress(), c.controlTls(),
                c.controlTlsClientAuth(), c.inlineLimit(), c.coalesceLimit(), c.deviceCoalesceLimit(), c.agents());
    }

    /** These settings as the application's type, without a warm-up. */
    public io.tcpx4j.api.EngineConfig toApi() {
        return api(name, listenHost, listenPort, advertiseHost, channels, channelDevices, chunkSize, sendWindow,
                recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout, progress, controlTls,
                controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit, agents);
    }

    private static io.tcpx4j.api.EngineConfig api(String name, String listenHost, int listenPort, String advertiseHost,
            int channels, List<Integer> channelDevices, int chunkSize, int sendWindow, int recvWindow,
            Duration peerTimeout, Duration connectTimeout, Duration heartbeat, Duration shutdownTimeout,
            Progress progress, SSLContext controlTls, boolean controlTlsClientAuth, int inlineLimit,
            int coalesceLimit, int deviceCoalesceLimit, int agents) {
        return new io.tcpx4j.api.EngineConfig(name, listenHost, listenPort, advertiseHost, channels, channelDevices,
                chunkSize, sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat, shutdownTimeout,
                progress, controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit, deviceCoalesceLimit,
                agents, 0);
    }

    /** The api record's {@link io.tcpx4j.api.EngineConfig#defaults defaults}. */
    public static EngineConfig defaults(String name) {
        return from(io.tcpx4j.api.EngineConfig.defaults(name));
    }

    public EngineConfig withName(String v) {
        return from(toApi().withName(v));
    }

    public EngineConfig withListen(String host, int port) {
        return from(toApi().withListen(host, port));
    }

    public EngineConfig withChannels(int v) {
        return from(toApi().withChannels(v));
    }

    public EngineConfig withChunkSize(int v) {
        return from(toApi().withChunkSize(v));
    }

    public EngineConfig withWindows(int send, int recv) {
        return from(toApi().withWindows(send, recv));
    }

    public EngineConfig withTimeouts(Duration peer, Duration connect, Duration beat) {
        return from(toApi().withTimeouts(peer, connect, beat));
    }

    public EngineConfig withShutdownTimeout(Duration v) {
        return from(toApi().withShutdownTimeout(v));
    }

    public EngineConfig withProgress(Progress v) {
        return from(toApi().withProgress(v));
    }

    public EngineConfig withControlTls(SSLContext context, boolean requireClientAuth) {
        return from(toApi().withControlTls(context, requireClientAuth));
    }

    public EngineConfig withInlineLimit(int v) {
        return from(toApi().withInlineLimit(v));
    }

    public EngineConfig withCoalesceLimit(int v) {
        return from(toApi().withCoalesceLimit(v));
    }

    public EngineConfig withDeviceCoalesceLimit(int v) {
        return from(toApi().withDeviceCoalesceLimit(v));
    }

    public EngineConfig withAgents(int v) {
        return from(toApi().withAgents(v));
    }
}
