package io.tcpx4j.tck;

import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

/**
 * A message's two ends on one channel of a conformance test: host buffers of the same size, the source
 * filled with random bytes ({@link #data}), the destination poisoned against them, each registered with
 * its comm. The buffers belong to the test's fixture, which frees them.
 */
final class Loaded {
    final TckFixture.Buf src;
    final TckFixture.Buf dst;
    final byte[] data;
    final MemoryRegistration sr;
    final MemoryRegistration rr;

    Loaded(TckFixture fixture, TckFixture.Channel c, int size) {
        src = fixture.host(size);
        dst = fixture.host(size);
        data = fixture.fillRandom(src, size);
        fixture.poison(dst, data);
        sr = c.sender().register(c.send(), src.addr, src.capacity, PtrType.HOST);
        rr = c.receiver().register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
    }
}
