package io.tcpx4j.metrics;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.NetRequest;

/**
 * A request of a {@link MeteredComm}: the transport's own request plus the comm it was posted on, so that
 * its completion is counted for the comm's device. Pooled per comm like the transport pools its own.
 *
 * <p><b>Not thread-safe</b>: driven like its comm, by one thread at a time.
 */
final class MeteredRequest implements NetRequest {

    final MeteredComm comm;
    NetRequest delegate;
    /** Posted and not yet finished (a send tested done, a receive consumed, or its test threw). */
    boolean busy;

    MeteredRequest(MeteredComm comm) {
        this.comm = comm;
    }

    @Override
    public int size() {
        return delegate.size();
    }

    @Override
    public int fragmentCount() {
        return delegate.fragmentCount();
    }

    @Override
    public long fragmentsAddress() {
        return delegate.fragmentsAddress();
    }

    @Override
    public long bounceBase() {
        return delegate.bounceBase();
    }

    @Override
    public long bounceBytes() {
        return delegate.bounceBytes();
    }

    @Override
    public MemoryKind bounceKind() {
        return delegate.bounceKind();
    }

    @Override
    public String toString() {
        return "Metered" + delegate;
    }
}
