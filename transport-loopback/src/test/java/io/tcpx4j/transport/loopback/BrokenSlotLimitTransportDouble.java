package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;

/** Broken test double: accepts a 17th request per comm (a phantom that never completes) instead of BUSY. */
final class BrokenSlotLimitTransportDouble extends ForwardingNetTransport {

    BrokenSlotLimitTransportDouble(NetTransport delegate) {
        super(delegate);
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        NetRequest r = super.isend(comm, address, size, tag, registration);
        return r != null ? r : new Phantom(size);
    }

    @Override
    public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
        NetRequest r = super.irecv(comm, address, size, tag, registration);
        return r != null ? r : new Phantom(size);
    }

    @Override
    public boolean test(NetRequest request) {
        return !(request instanceof Phantom) && super.test(request);
    }

    private record Phantom(int size) implements NetRequest {
        @Override
        public int fragmentCount() {
            return 0;
        }

        @Override
        public long fragmentsAddress() {
            return 0;
        }

        @Override
        public long bounceBase() {
            return 0;
        }

        @Override
        public long bounceBytes() {
            return 0;
        }

        @Override
        public MemoryKind bounceKind() {
            return MemoryKind.DRAM;
        }
    }
}
