package io.tcpx4j.tck;

import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.PtrType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks of {@link NetTransportConformanceTest} on devices, connection set-up, registration and moving every
 * byte; {@link SlotConformance} has those on request slots and ordering.
 */
public abstract class CoreConformance extends SlotConformance {

    // ---- tests: devices and connection set-up

    @Test
    void describesItsDevices() {
        assertThat(a.name()).isNotBlank();
        assertThat(a.deviceCount()).isPositive();
        for (int d = 0; d < a.deviceCount(); d++) {
            DeviceProperties p = a.properties(d);
            assertThat(p.supports(PtrType.HOST)).as("device %d sends host memory", d).isTrue();
            assertThat(a.capabilities(d)).as("device %d can do what the transport declares for every device", d)
                    .containsAll(a.capabilities());
            if (a.capabilities(d).contains(Capability.CUDA_MEMORY)) {
                assertThat(p.supports(PtrType.CUDA)).as("device %d declares CUDA memory and takes it", d).isTrue();
            }
            assertThat(p.maxRecvs()).isPositive();
        }
        expectCode(() -> a.properties(a.deviceCount()), Code.INVALID_PARAM);
        expectCode(() -> a.properties(-1), Code.INVALID_PARAM);
        expectCode(() -> a.capabilities(a.deviceCount()), Code.INVALID_PARAM);
        expectCode(() -> a.capabilities(-1), Code.INVALID_PARAM);
    }

    @Test
    void handlesAre128BytesAndCopies() {
        Listener l = b.listen(device());
        byte[] h = l.handle();
        assertThat(h).hasSize(Listener.HANDLE_SIZE);
        byte[] before = h.clone();
        Arrays.fill(h, (byte) 0);
        assertThat(l.handle()).as("handle() returns a copy").isEqualTo(before);
        b.closeListen(l);
    }

    @Test
    void malformedHandlesAreInvalidParam() {
        expectCode(() -> a.connect(device(), new byte[Listener.HANDLE_SIZE - 1]), Code.INVALID_PARAM);
        expectCode(() -> a.connect(device(), new byte[Listener.HANDLE_SIZE + 1]), Code.INVALID_PARAM);
    }

    @Test
    void acceptSaysNotYetUntilThePeerConnects() {
        Listener l = b.listen(device());
        for (int i = 0; i < 20; i++) {
            assertThat(b.accept(l)).as("accept before any connect").isNull();
            LockSupport.parkNanos(5_000_000);
        }
        Channel c = connect(a, b, l);
        assertThat(c.send()).isNotNull();
        assertThat(c.recv()).isNotNull();
        roundTrip(c, 4097);
    }

    /**
     * A listener yields exactly one comm (the SPI's {@code accept}). TCPX frees its accept state when accept
     * succeeds and keeps the pointer, so a second accept on that listen comm frees it again and the
     * process aborts: after its comm, accept must be INVALID_PARAM without reaching the plugin. The
     * comm outlives its listener.
     */
    @Test
    void aListenerYieldsExactlyOneComm() {
        Listener l = b.listen(device());
        Channel c = connect(a, b, l);
        for (int i = 0; i < 3; i++) {
            expectCode(() -> b.accept(l), Code.INVALID_PARAM);
        }
        b.closeListen(l);
        roundTrip(c, 4097);
    }

    // ---- tests: registration

    @Test
    void registrationsArePerComm() {
        Channel c1 = connect(a, b);
        Channel c2 = connect(a, b);
        Buf buf = host(8192);
        MemoryRegistration r1 = a.register(c1.send(), buf.addr, buf.capacity, PtrType.HOST);
        assertThat(r1.address()).isEqualTo(buf.addr);
        assertThat(r1.size()).isEqualTo(buf.capacity);
        assertThat(r1.type()).isEqualTo(PtrType.HOST);
        expectCode(() -> a.isend(c2.send(), buf.addr, 100, 0, r1), Code.INVALID_PARAM);
        expectCode(() -> a.deregister(c2.send(), r1), Code.INVALID_PARAM);
        expectCode(() -> b.irecv(c1.recv(), buf.addr, 100, 0, r1), Code.INVALID_PARAM);
        expectCode(() -> a.isend(c1.send(), buf.addr + 1, buf.capacity, 0, r1), Code.INVALID_PARAM);
        expectCode(() -> a.isend(c1.send(), buf.addr - 1, 10, 0, r1), Code.INVALID_PARAM);
        a.deregister(c1.send(), r1);
        expectCode(() -> a.isend(c1.send(), buf.addr, 100, 0, r1), Code.INVALID_PARAM);
        roundTrip(c2, 100);
    }

    @Test
    void cudaMemoryFollowsTheAlignmentRuleOrIsNotSupported() {
        Channel c = connect(a, b);
        boolean sends = a.capabilities(device()).contains(Capability.CUDA_MEMORY);
        boolean receives = b.capabilities(device()).contains(Capability.CUDA_MEMORY);
        if (!sends || !receives) {
            Buf buf = host(2 * PAGE);
            if (!sends) {
                expectCode(() -> a.register(c.send(), buf.addr, PAGE, PtrType.CUDA), Code.NOT_SUPPORTED);
            }
            if (!receives) {
                expectCode(() -> b.register(c.recv(), buf.addr, PAGE, PtrType.CUDA), Code.NOT_SUPPORTED);
            }
            return;
        }
        Buf src = cuda(3 * PAGE);
        Buf dst = cuda(3 * PAGE);
        expectCode(() -> a.register(c.send(), src.addr + 1, PAGE, PtrType.CUDA), Code.INVALID_PARAM);
        expectCode(() -> a.register(c.send(), src.addr, PAGE - 1, PtrType.CUDA), Code.INVALID_PARAM);
        expectCode(() -> a.register(c.send(), src.addr + PAGE / 2, 2 * PAGE, PtrType.CUDA), Code.INVALID_PARAM);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.CUDA);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.CUDA);
        for (int size : new int[] {1, PAGE + 17, 3 * PAGE}) {
            transfer(c, src, sr, dst, rr, size);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 4095, 4096, 4097, 512 * 1024 - 1, 512 * 1024, 512 * 1024 + 1, 4 << 20})
    void transfersEveryByte(int size) {
        roundTrip(connect(a, b), size);
    }

    // ---- helpers: round trips

    void roundTrip(Channel c, int size) {
        Buf src = host(size);
        Buf dst = host(size);
        MemoryRegistration sr = c.sender().register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = c.receiver().register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        transfer(c, src, sr, dst, rr, size);
    }

    void transfer(Channel c, Buf src, MemoryRegistration sr, Buf dst, MemoryRegistration rr, int size) {
        byte[] data = fillRandom(src, size);
        poison(dst, data);
        NetRequest r = postRecv(c, dst.addr, size, rr);
        NetRequest s = postSend(c, src.addr, size, sr);
        drain(c, new ArrayDeque<>(List.of(s)), new ArrayDeque<>(List.of(r)), dst);
        verify(dst, data, size);
    }
}
