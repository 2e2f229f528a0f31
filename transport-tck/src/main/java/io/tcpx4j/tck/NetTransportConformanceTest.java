package io.tcpx4j.tck;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.ScatterGather;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The conformance suite of {@link NetTransport}: the SPI contract that its Javadoc states, as TCPX behaves.
 * An adapter's test subclasses it and supplies {@link #newTransport()}; optional capabilities are read
 * from {@link NetTransport#capabilities(int)} of the device the suite uses (a plugin's devices differ)
 * and, for fault injection, from {@link NetTransport#capabilities()}: each declared one is exercised,
 * each undeclared one must fail with NOT_SUPPORTED (or, for {@link Capability#DEVMEM_RECEIVE}, be
 * absent: receives land in place).
 *
 * <p>Every test uses two independent transports, {@code a} (sender) and {@code b} (receiver), verifies
 * every byte (random data; destinations poisoned with the complement of the expected data; guard
 * bytes around host buffers) and bounds every wait by {@link #deadline()}. The checks of devices,
 * set-up and registration are inherited from {@link CoreConformance}, those of slots, FIFO, tags and
 * asynchrony from {@link SlotConformance}, those of close, peer death and progress wake-ups from
 * {@link LifecycleConformance}, those of driver sockets from {@link DriverConformance}; this class adds
 * devmem receives and fault injection; {@link TckFixture}
 * holds the hooks and helpers.
 */
public abstract class NetTransportConformanceTest extends DriverConformance {

    // ---- tests: devmem receives

    @Test
    void devmemReceivesAreFragmentsCoveringTheReceiveExactlyOnce() {
        Channel c = connect(a, b);
        boolean declared = b.capabilities(device()).contains(Capability.DEVMEM_RECEIVE);
        PtrType type = declared ? devmemPtrType() : PtrType.HOST;
        for (int size : new int[] {3 * PAGE + 123, 512 * 1024}) {
            Buf src = type == PtrType.CUDA ? cuda(size) : host(size);
            Buf dst = type == PtrType.CUDA ? cuda(size) : host(size);
            byte[] data = fillRandom(src, size);
            poison(dst, data);
            MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, type);
            MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, type);
            NetRequest r = postRecv(c, dst.addr, size, rr);
            NetRequest s = postSend(c, src.addr, size, sr);
            awaitDone(a, s, "send");
            awaitDone(b, r, "receive");
            if (!declared) {
                assertThat(r.fragmentCount()).as("without DEVMEM_RECEIVE receives land in place").isZero();
                verify(dst, data, size);
                b.consumed(c.recv(), r);
                continue;
            }
            checkFragments(r, size);
            ScatterGather u = scatterGather();
            unpack(u, r, dst.addr, dst.kind);
            b.consumed(c.recv(), r);
            verify(dst, data, size);
        }
    }

    // ---- tests: fault injection

    @Test
    void droppedConnectionSurfacesAsRemoteDisconnectOnBothSides() {
        if (!faultInjection(TckFaults.dropAfter(64 * 1024))) {
            return;
        }
        NetTransport f = track(newFaultyTransport(TckFaults.dropAfter(64 * 1024)));
        Channel c = connect(f, b);
        int size = 1 << 20;
        Buf src = host(size);
        Buf dst = host(size);
        MemoryRegistration sr = f.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r = postRecv(c, dst.addr, size, rr);
        NetRequest s = require(f.isend(c.send(), src.addr, size, 0, sr), "isend");
        assertThat(awaitFailure(() -> f.test(s), "send over a dropped connection").code())
                .isEqualTo(Code.REMOTE_DISCONNECT);
        assertThat(awaitFailure(() -> b.test(r), "receive over a dropped connection").code())
                .isEqualTo(Code.REMOTE_DISCONNECT);
    }

    @Test
    void corruptHandlesAreRejected() {
        if (!faultInjection(TckFaults.corruptHandles())) {
            return;
        }
        NetTransport f = track(newFaultyTransport(TckFaults.corruptHandles()));
        Listener l = f.listen(device());
        byte[] h = l.handle();
        TransferException e = awaitFailure(() -> {
            assertThat(f.accept(l)).as("nothing may connect with a corrupt handle").isNull();
            return a.connect(device(), h) != null;
        }, "connect with a corrupt handle");
        assertThat(e.code()).isEqualTo(Code.INVALID_PARAM);
    }

    @Test
    void delayedCompletionsNeverCompleteInline() {
        Duration delay = Duration.ofMillis(200);
        if (!faultInjection(TckFaults.delay(delay))) {
            return;
        }
        NetTransport f = track(newFaultyTransport(TckFaults.delay(delay)));
        Channel c = connect(f, b);
        Loaded m = new Loaded(this, c, PAGE);
        NetRequest r = postRecv(c, m.dst.addr, PAGE, m.rr);
        long t0 = System.nanoTime();
        NetRequest s = require(f.isend(c.send(), m.src.addr, PAGE, 0, m.sr), "isend");
        assertThat(f.test(s)).as("the first test right after isend").isFalse();
        awaitDone(f, s, "delayed send");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(delay);
        awaitDone(b, r, "receive");
        unpack(scatterGather(), r, m.dst.addr, m.dst.kind);
        b.consumed(c.recv(), r);
        verify(m.dst, m.data, PAGE);
    }

    /** True if declared; otherwise checks that asking for the fault is NOT_SUPPORTED. */
    boolean faultInjection(TckFaults faults) {
        if (a.capabilities().contains(Capability.FAULT_INJECTION)) {
            return true;
        }
        expectCode(() -> track(newFaultyTransport(faults)), Code.NOT_SUPPORTED);
        return false;
    }

}
