package io.tcpx4j.domain;

import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** A test double around a transport that counts the data requests an engine puts on it and the sizes of its sends. */
public final class CountingTransportDouble extends ForwardingNetTransport {
    final AtomicInteger requests = new AtomicInteger();
    /** Bytes of every send posted, in order. */
    public final Queue<Integer> sendSizes = new ConcurrentLinkedQueue<>();

    public CountingTransportDouble(NetTransport d) {
        super(d);
    }

    @Override
    public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
        NetRequest r = super.isend(comm, address, size, tag, registration);
        if (r != null) {
            requests.incrementAndGet();
            sendSizes.add(size);
        }
        return r;
    }

    @Override
    public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration) {
        NetRequest r = super.irecv(comm, address, size, tag, registration);
        if (r != null) {
            requests.incrementAndGet();
        }
        return r;
    }

    /** Requests both transports of {@code pair} (each wrapped in one of these) took. */
    public static int total(EnginePair pair) {
        return ((CountingTransportDouble) pair.ta).requests.get() + ((CountingTransportDouble) pair.tb).requests.get();
    }
}
