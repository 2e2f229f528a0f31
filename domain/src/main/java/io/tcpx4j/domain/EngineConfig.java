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
        channelDevices = new io.tcpx4j.api.EngineConfig(name, listenHost, listenPort, advertiseHost, channels,
                channelDevices, chunkSize, sendWindow, recvWindow, peerTimeout, connectTimeout, heartbeat,
                shutdownTimeout, progress, controlTls, controlTlsClientAuth, inlineLimit, coalesceLimit,
                deviceCoalesceLimit, agents, 0).channelDevices();
    }

    /** The application's configuration as the domain reads it (its warm-up is the composition root's). */
    public static EngineConfig from(io.tcpx4j.api.EngineConfig c) {
        return new EngineConfig(c.name(), c.listenHost(), c.listenPort(), c.advertiseHost(), c.channels(),
                c.channelDevices(), c.chunkSize(), c.sendWindow(), c.recvWindow(), c.peerTimeout(),
                c.connectTimeout(), c.heartbeat(), c.shutdownTimeout(), c.progress(), c.controlTls(),
                c.controlTlsClientAuth(), c.inlineLimit(), c.coalesceLimit(), c.deviceCoalesceLimit(), c.agents());
    }
}
