package io.tcpx4j.domain.peer;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.domain.protocol.ConnInfo;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A named peer: how to reach it, its published regions, and the connection to it.
 *
 * <p>Thread-safe for {@link #info}, {@link #address} and {@link #remoteRegions}; the connection and
 * the pending queue belong to the engine's agent.
 */
public final class Peer {

    public final String name;
    volatile ConnInfo info;
    volatile InetSocketAddress address;
    final CopyOnWriteArrayList<MemoryDescriptor> remoteRegions = new CopyOnWriteArrayList<>();

    // agent only
    Connection conn;
    final ArrayDeque<PendingWork> pending = new ArrayDeque<>();
    long pendingSince;
    long crossingLostAt = Long.MIN_VALUE / 2;

    Peer(String name) {
        this.name = name;
    }

    /** The region the peer published that holds {@code [address, address+length)}, or null. */
    public MemoryDescriptor publishedRegion(long address, long length) {
        for (MemoryDescriptor r : remoteRegions) {
            if (r.contains(address, length)) {
                return r;
            }
        }
        return null;
    }
}
