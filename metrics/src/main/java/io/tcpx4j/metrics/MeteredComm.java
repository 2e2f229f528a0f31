package io.tcpx4j.metrics;

import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

/**
 * A transport's comm with the meters of its device and a pool of {@link MeteredRequest}s: a comm holds
 * at most {@link NetTransport#MAX_REQUESTS} requests at a time, so a ring of that many wrappers serves
 * every post without allocating.
 *
 * <p><b>Not thread-safe</b>: the engine drives a comm from one thread at a time.
 */
abstract class MeteredComm implements Comm {

    final DeviceMeters meters;
    final int direction;
    private final MeteredRequest[] pool = new MeteredRequest[NetTransport.MAX_REQUESTS];
    private int next;

    MeteredComm(DeviceMeters meters, int direction) {
        this.meters = meters;
        this.direction = direction;
        for (int i = 0; i < pool.length; i++) {
            pool[i] = new MeteredRequest(this);
        }
    }

    abstract Comm delegate();

    /** Wraps a request the transport just accepted, and counts the post. */
    MeteredRequest posted(NetRequest request) {
        meters.posted[direction].increment();
        MeteredRequest r = null;
        for (int i = 0; i < pool.length; i++) {
            MeteredRequest c = pool[(next + i) % pool.length];
            if (!c.busy) {
                r = c;
                next = (next + i + 1) % pool.length;
                break;
            }
        }
        if (r == null) {
            r = new MeteredRequest(this); // more than the contract's slots: correct, just not pooled
        }
        r.delegate = request;
        r.busy = true;
        return r;
    }

    /** A send: the transport's {@link SendComm} and its meters. */
    static final class Send extends MeteredComm implements SendComm {
        final SendComm delegate;

        Send(SendComm delegate, DeviceMeters meters) {
            super(meters, DeviceMeters.SEND);
            this.delegate = delegate;
        }

        @Override
        Comm delegate() {
            return delegate;
        }
    }

    /** A receive: the transport's {@link RecvComm} and its meters. */
    static final class Recv extends MeteredComm implements RecvComm {
        final RecvComm delegate;

        Recv(RecvComm delegate, DeviceMeters meters) {
            super(meters, DeviceMeters.RECEIVE);
            this.delegate = delegate;
        }

        @Override
        Comm delegate() {
            return delegate;
        }
    }
}
