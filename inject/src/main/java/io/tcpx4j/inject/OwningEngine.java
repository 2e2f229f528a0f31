package io.tcpx4j.inject;

import io.tcpx4j.api.EngineStats;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferStatus;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The engine {@link TransferEngines} hands out: every call goes to the started engine, except that
 * {@link #close()} stops the lifecycle, which closes the engine and everything made or handed over for it.
 *
 * <p>Thread-safe, as the engine is.
 */
final class OwningEngine implements TransferEngine {

    private final TransferEngine engine;
    private final EngineLifecycle lifecycle;

    OwningEngine(TransferEngine engine, EngineLifecycle lifecycle) {
        this.engine = engine;
        this.lifecycle = lifecycle;
    }

    @Override
    public String name() {
        return engine.name();
    }

    @Override
    public RegisteredMemory register(MemoryDescriptor memory) {
        return engine.register(memory);
    }

    @Override
    public byte[] connInfo() {
        return engine.connInfo();
    }

    @Override
    public void loadPeer(String name, byte[] connInfo) {
        engine.loadPeer(name, connInfo);
    }

    @Override
    public void loadRemoteMetadata(String peer, byte[] publicMetadata) {
        engine.loadRemoteMetadata(peer, publicMetadata);
    }

    @Override
    public void unloadRemoteMetadata(String peer, byte[] publicMetadata) {
        engine.unloadRemoteMetadata(peer, publicMetadata);
    }

    @Override
    public void connect(String peer) {
        engine.connect(peer);
    }

    @Override
    public void disconnect(String peer) {
        engine.disconnect(peer);
    }

    @Override
    public Session session(String peer) {
        return engine.session(peer);
    }

    @Override
    public List<Notification> drainNotifications() {
        return engine.drainNotifications();
    }

    @Override
    public void onNotification(Consumer<Notification> listener) {
        engine.onNotification(listener);
    }

    @Override
    public EngineStats stats() {
        return engine.stats();
    }

    @Override
    public int progress() {
        return engine.progress();
    }

    @Override
    public TransferStatus driveUntilEnded(Transfer transfer, Duration timeout) {
        return engine.driveUntilEnded(transfer, timeout);
    }

    @Override
    public void close() {
        lifecycle.stop();
    }

    @Override
    public String toString() {
        return engine.toString();
    }
}
