package io.tcpx4j.metrics;

import io.tcpx4j.api.ForwardingTransferEngine;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.TransferEngine;

import java.util.Objects;

/**
 * A {@link TransferEngine} that records every transfer posted through its sessions in
 * {@link TransferMetrics}: per peer, operation and local memory kind, transfers and bytes that ended
 * DONE and their latency (from the write or read call until the end), failures by code, and transfers
 * in flight. Every other call goes to the engine it wraps unchanged, and the {@link io.tcpx4j.api.Transfer}s it
 * returns are the wrapped engine's own.
 *
 * <p>What peers read from or write into this engine is not posted here and does not show in these
 * meters; the engine counts it per peer itself ({@link io.tcpx4j.api.TransferEngine#peerStats()}, published by
 * {@link EngineGauges}), and the transport's meters show its bytes ({@link MeteredNetTransport}). Once
 * {@link TransferMetrics#remove()} ran, sessions are the wrapped engine's own.
 *
 * <p>Thread-safe, as the engine it wraps.
 */
public final class MeteredTransferEngine extends ForwardingTransferEngine {

    private final TransferMetrics metrics;

    public MeteredTransferEngine(TransferEngine delegate, TransferMetrics metrics) {
        super(delegate);
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    @Override
    public Session session(String peer) {
        Session s = delegate().session(peer);
        PeerMeters meters = metrics.peer(s.peer());
        return meters == null ? s : new MeteredSession(s, meters);
    }
}
