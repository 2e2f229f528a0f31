package io.tcpx4j.api;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A {@link TransferEngine} that hands every call to another one: the base of decorators that change a few
 * calls (recording, owning what the engine was built with) and leave the rest to the engine they wrap.
 * Subclasses override what they change; {@link #delegate()} is the wrapped engine.
 *
 * <p>Thread-safe, as the engine it wraps.
 */
public abstract class ForwardingTransferEngine implements TransferEngine {

    private final TransferEngine delegate;

    protected ForwardingTransferEngine(TransferEngine delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The engine every call goes to unless a subclass says otherwise. */
    public TransferEngine delegate() {
        return delegate;
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
    public Session session(String peer) {
        return delegate.session(peer);
    }

    @Override
    public List<Notification> drainNotifications() {
        return delegate.drainNotifications();
    }

    @Override
    public void onNotification(Consumer<Notification> listener) {
        delegate.onNotification(listener);
    }

    @Override
    public EngineStats stats() {
        return delegate.stats();
    }

    @Override
    public List<PeerStats> peerStats() {
        return delegate.peerStats();
    }

    @Override
    public void addPeerListener(PeerListener listener) {
        delegate.addPeerListener(listener);
    }

    @Override
    public void removePeerListener(PeerListener listener) {
        delegate.removePeerListener(listener);
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

    @Override
    public String toString() {
        return delegate.toString();
    }
}
