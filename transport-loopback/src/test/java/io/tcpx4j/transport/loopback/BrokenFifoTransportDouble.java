package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;

/** Broken test double: ignores FIFO misuse (a non-head test says "not yet", an out-of-order consume is dropped). */
final class BrokenFifoTransportDouble extends ForwardingNetTransport {

    BrokenFifoTransportDouble(NetTransport delegate) {
        super(delegate);
    }

    @Override
    public boolean test(NetRequest request) {
        try {
            return super.test(request);
        } catch (TransferException e) {
            if (e.code() == TransferException.Code.INVALID_PARAM) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public void consumed(RecvComm comm, NetRequest request) {
        try {
            super.consumed(comm, request);
        } catch (TransferException e) {
            if (e.code() != TransferException.Code.INVALID_PARAM) {
                throw e;
            }
        }
    }
}
