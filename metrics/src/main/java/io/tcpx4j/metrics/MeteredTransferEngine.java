package io.tcpx4j.metrics;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferStatus;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A {@link TransferEngine} that records every transfer posted through its sessions in
 * {@link TransferMetrics}: per peer, operation and local memory kind, transfers and bytes that ended
 * DONE and their latency (from the write or read call until the end), failures by code, and transfers
 * in flight. Every other call goes to the engine it wraps unchanged, and the {@link Transfer}s it
 * returns are the wrapped engine's own.
 *
 * <p>What peers read from or write into this engine is not posted here and does not show in these
 * meters; it shows in the transport's ({@link MeteredNetTransport}).
 *
 * <p>Thread-safe, as the engine it wraps.
 */
public final class MeteredTransferEngine implements TransferEngine {

    private final TransferEngine delegate;
    private final TransferMetrics metrics;

    public MeteredTransferEngine(TransferEngine delegate, TransferMetrics metrics) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    /** The engine this one records for. */
    public TransferEngine delegate() {
        return delegate;
    }

    @Override
    public Session session(String peer) {
        Session s = delegate.session(peer);
        return new MeteredSession(s, metrics.peer(s.peer()));
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public RegisteredMemory register(MemoryDescriptor memory) {
        return delegate.register(memory);
    }

    @Override
    public byte[] connInfo() {
        return delegate.connInfo();
    }

    @Override
    public void loadPeer(String name, byte[] connInfo) {
        delegate.loadPeer(name, connInfo);
    }

    @Override
    public void loadRemoteMetadata(String peer, byte[] publicMetadata) {
        delegate.loadRemoteMetadata(peer, publicMetadata);
    }

    @Override
    public void unloadRemoteMetadata(String peer, byte[] publicMetadata) {
        delegate.unloadRemoteMetadata(peer, publicMetadata);
    }

    @Override
    public void connect(String peer) {
        delegate.connect(peer);
    }

    @Override
    public void disconnect(String peer) {
        delegate.disconnect(peer);
    }

    @Override
    public List<Notification> drainNotifications() {
        return delegate.drainNotifications();
    }

    @Override
    public void onNotification(java.util.function.Consumer<Notification> listener) {
        delegate.onNotification(listener);
    }

    @Override
    public io.tcpx4j.api.EngineStats stats() {
        return delegate.stats();
    }

    @Override
    public int progress() {
        return delegate.progress();
    }

    @Override
    public TransferStatus driveUntilEnded(Transfer transfer, Duration timeout) {
        return delegate.driveUntilEnded(transfer, timeout);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
