package io.tcpx4j.metrics;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;

import java.util.List;

/**
 * A session whose transfers {@link PeerMeters} records: it counts a transfer in flight when posted and
 * hands its completion a {@link TransferObserver}; a post the session refuses is counted as an error
 * by its code.
 *
 * <p>Thread-safe, as the session it wraps.
 */
final class MeteredSession implements Session {

    private static final int WRITE = 0;
    private static final int READ = 1;

    private final Session delegate;
    private final PeerMeters meters;

    MeteredSession(Session delegate, PeerMeters meters) {
        this.delegate = delegate;
        this.meters = meters;
    }

    @Override
    public String peer() {
        return delegate.peer();
    }

    @Override
    public Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
        long start = System.nanoTime();
        Transfer t;
        try {
            t = delegate.write(local, remote, notification);
        } catch (TransferException e) {
            meters.error(WRITE, e.code());
            throw e;
        }
        return observed(t, WRITE, local, start);
    }

    @Override
    public Transfer read(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
        long start = System.nanoTime();
        Transfer t;
        try {
            t = delegate.read(local, remote, notification);
        } catch (TransferException e) {
            meters.error(READ, e.code());
            throw e;
        }
        return observed(t, READ, local, start);
    }

    private Transfer observed(Transfer t, int op, List<MemoryDescriptor> local, long start) {
        MemoryKind kind = local.isEmpty() ? MemoryKind.DRAM : local.get(0).kind();
        meters.posted.increment();
        t.completion().whenComplete(new TransferObserver(meters.recorder(op, kind), t.bytes(), start));
        return t;
    }

    @Override
    public void notify(byte[] message) {
        delegate.notify(message);
    }
}
