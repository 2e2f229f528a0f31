package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;

/** Broken test double: a fragmented receive reports one fragment too few (the last one is skipped). */
final class BrokenFragmentTransportDouble extends ForwardingNetTransport {

    BrokenFragmentTransportDouble(NetTransport delegate) {
        super(delegate);
    }

    @Override
    public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
        NetRequest r = super.irecv(comm, address, size, tag, registration);
        return r == null ? null : new SkipsLast(r);
    }

    @Override
    public boolean test(NetRequest request) {
        return super.test(unwrap(request));
    }

    @Override
    public void consumed(RecvComm comm, NetRequest request) {
        super.consumed(comm, unwrap(request));
    }

    private static NetRequest unwrap(NetRequest r) {
        return r instanceof SkipsLast s ? s.real : r;
    }

    private record SkipsLast(NetRequest real) implements NetRequest {
        @Override
        public int size() {
            return real.size();
        }

        @Override
        public int fragmentCount() {
            int n = real.fragmentCount();
            return n > 1 ? n - 1 : n;
        }

        @Override
        public long fragmentsAddress() {
            return real.fragmentsAddress();
        }

        @Override
        public long bounceBase() {
            return real.bounceBase();
        }

        @Override
        public long bounceBytes() {
            return real.bounceBytes();
        }

        @Override
        public MemoryKind bounceKind() {
            return real.bounceKind();
        }
    }
}
