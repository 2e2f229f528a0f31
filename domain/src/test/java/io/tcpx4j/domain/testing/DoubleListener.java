package io.tcpx4j.domain.testing;

import io.tcpx4j.domain.port.out.Listener;

import java.util.ArrayDeque;

/**
 * A listener of an {@link InMemoryNetTransportDouble}: its handle and the connects waiting for
 * accept, in arrival order.
 *
 * <p><b>Not thread-safe</b>: the accept queue is guarded by the {@link InMemoryFabric}'s lock.
 */
final class DoubleListener implements Listener {

    final long id;
    final int device;
    final InMemoryNetTransportDouble owner;
    private final byte[] handle;
    final ArrayDeque<CommPair> waitingForAccept = new ArrayDeque<>();
    /** Written under the fabric's lock; volatile for the ownership check outside it. */
    volatile boolean closed;
    /** Accept returned this listener's one comm. Caller's thread (the SPI drives a listener from one). */
    volatile boolean yielded;

    DoubleListener(long id, int device, InMemoryNetTransportDouble owner, byte[] handle) {
        this.id = id;
        this.device = device;
        this.owner = owner;
        this.handle = handle;
    }

    @Override
    public byte[] handle() {
        return handle.clone();
    }

    boolean matches(byte[] candidate) {
        return java.util.Arrays.equals(handle, candidate);
    }

    @Override
    public String toString() {
        return "DoubleListener[" + id + "]";
    }
}
