package io.tcpx4j.domain.peer;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.registration.RegionRegistry;

/**
 * What every connection of one progress agent shares: who the engine is, its configuration, its ports
 * and its registered memory, the roster of its peers' counters, which agent of the engine this is
 * ({@code agent}) and that agent's unpacker.
 */
public record EngineContext(LocalIdentity identity, EngineConfig config, NetTransport transport, ScatterGather unpacker,
                     Clock clock, RegionRegistry registry, PeerRoster roster, int agent) {

    public String name() {
        return identity.name();
    }

    public long now() {
        return clock.nanoTime();
    }

    /** Whether this agent serves the peer named {@code peer} ({@link ConnInfo#agentFor}). */
    boolean serves(String peer) {
        return ConnInfo.agentFor(peer, config.agents()) == agent;
    }

    /** The network device of data channel {@code channel}. */
    int deviceFor(int channel) {
        if (!config.channelDevices().isEmpty()) {
            return config.channelDevices().get(channel % config.channelDevices().size());
        }
        int n = transport.deviceCount();
        if (n < 1) {
            throw new TransferException(Code.BACKEND, "transport " + transport.name() + " reports no network devices");
        }
        return channel % n;
    }
}
