package io.tcpx4j.tck;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.memory.CpuUnpacker;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.port.out.Unpacker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The conformance suite of {@link NetTransport}: the SPI contract (DESIGN.md section 2) as TCPX behaves.
 * An adapter's test subclasses it and supplies {@link #newTransport()}; optional capabilities are read
 * from {@link NetTransport#capabilities()}: each declared one is exercised, each undeclared one must
 * fail with NOT_SUPPORTED (or, for {@link Capability#DEVMEM_RECEIVE}, be absent: receives land in place).
 *
 * <p>Every test uses two independent transports, {@code a} (sender) and {@code b} (receiver), verifies
 * every byte (random data; destinations poisoned with the complement of the expected data; guard
 * bytes around host buffers) and bounds every wait by {@link #deadline()}.
 */
public abstract class NetTransportConformanceTest {

    private static final int GUARD = 4096;
    private static final byte GUARD_BYTE = 0x5A;
    private static final int PAGE = 4096;

    /** Sender side endpoint. */
    protected NetTransport a;
    /** Receiver side endpoint. */
    protected NetTransport b;

    private final List<NetTransport> transports = new ArrayList<>();
    private final List<Buf> buffers = new ArrayList<>();
    private final List<Unpacker> unpackers = new ArrayList<>();
    private final long seed = System.nanoTime();
    private final Random random = new Random(seed);

    // ---- hooks

    /** A new, independent transport endpoint. Called twice per test (and more by some tests). */
    protected abstract NetTransport newTransport();

    /**
     * Memory services for CUDA buffers (allocation and copies) when the transport declares
     * {@link Capability#CUDA_MEMORY}. Default: host only.
     */
    protected DeviceMemory deviceMemory() {
        return new HostMemory();
    }

    /** An unpacker for fragmented receives. Default: the CPU unpacker (host bounce pages and destinations). */
    protected Unpacker newUnpacker() {
        return new CpuUnpacker();
    }

    /**
     * Memory whose receives land in bounce pages when {@link Capability#DEVMEM_RECEIVE} is declared:
     * CUDA for TCPX; HOST for a transport that bounces every receive (loopback devmem mode).
     */
    protected PtrType devmemPtrType() {
        return PtrType.HOST;
    }

    /**
     * A transport that injects {@code faults}, for transports declaring
     * {@link Capability#FAULT_INJECTION}; others keep this default, which throws NOT_SUPPORTED.
     */
    protected NetTransport newFaultyTransport(TckFaults faults) {
        throw new TransferException(Code.NOT_SUPPORTED, "no fault injection");
    }

    /** Longest any single wait may take before the test fails. */
    protected Duration deadline() {
        return Duration.ofSeconds(10);
    }

    /** Network device the suite uses. */
    protected int device() {
        return 0;
    }

    // ---- fixture

    @BeforeEach
    void openTransports() {
        a = track(newTransport());
        b = track(newTransport());
    }

    @AfterEach
    void closeTransports() {
        // transports first: they may still touch the buffers until closed
        assertTimeoutPreemptively(deadline(), () -> {
            for (NetTransport t : transports) {
                t.close();
            }
        }, "close() of a transport hung");
        for (Unpacker u : unpackers) {
            u.close();
        }
        for (Buf buf : buffers) {
            buf.free();
        }
    }

    /** Registers a transport for closing after the test. */
    protected final NetTransport track(NetTransport t) {
        transports.add(t);
        return t;
    }

    // ---- tests: devices and connection set-up

    @Test
    void describesItsDevices() {
        assertThat(a.name()).isNotBlank();
        assertThat(a.deviceCount()).isPositive();
        for (int d = 0; d < a.deviceCount(); d++) {
            DeviceProperties p = a.properties(d);
            assertThat(p.supports(PtrType.HOST)).as("device %d sends host memory", d).isTrue();
            assertThat(p.supports(PtrType.CUDA)).as("CUDA support matches the declared capability")
                    .isEqualTo(a.capabilities().contains(Capability.CUDA_MEMORY));
            assertThat(p.maxRecvs()).isPositive();
        }
        expectCode(() -> a.properties(a.deviceCount()), Code.INVALID_PARAM);
        expectCode(() -> a.properties(-1), Code.INVALID_PARAM);
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
        assertThat(c.send).isNotNull();
        assertThat(c.recv).isNotNull();
        roundTrip(c, 4097);
    }

    /**
     * A listener yields exactly one comm (DESIGN.md section 2). TCPX frees its accept state when accept
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
        MemoryRegistration r1 = a.register(c1.send, buf.addr, buf.capacity, PtrType.HOST);
        assertThat(r1.address()).isEqualTo(buf.addr);
        assertThat(r1.size()).isEqualTo(buf.capacity);
        expectCode(() -> a.isend(c2.send, buf.addr, 100, 0, r1), Code.INVALID_PARAM);
        expectCode(() -> a.deregister(c2.send, r1), Code.INVALID_PARAM);
        expectCode(() -> b.irecv(c1.recv, buf.addr, 100, 0, r1), Code.INVALID_PARAM);
        expectCode(() -> a.isend(c1.send, buf.addr + 1, buf.capacity, 0, r1), Code.INVALID_PARAM);
        expectCode(() -> a.isend(c1.send, buf.addr - 1, 10, 0, r1), Code.INVALID_PARAM);
        a.deregister(c1.send, r1);
        expectCode(() -> a.isend(c1.send, buf.addr, 100, 0, r1), Code.INVALID_PARAM);
        roundTrip(c2, 100);
    }

    @Test
    void cudaMemoryFollowsTheAlignmentRuleOrIsNotSupported() {
        Channel c = connect(a, b);
        if (!a.capabilities().contains(Capability.CUDA_MEMORY)) {
            Buf buf = host(2 * PAGE);
            expectCode(() -> a.register(c.send, buf.addr, PAGE, PtrType.CUDA), Code.NOT_SUPPORTED);
            expectCode(() -> b.register(c.recv, buf.addr, PAGE, PtrType.CUDA), Code.NOT_SUPPORTED);
            return;
        }
        Buf src = cuda(3 * PAGE);
        Buf dst = cuda(3 * PAGE);
        expectCode(() -> a.register(c.send, src.addr + 1, PAGE, PtrType.CUDA), Code.INVALID_PARAM);
        expectCode(() -> a.register(c.send, src.addr, PAGE - 1, PtrType.CUDA), Code.INVALID_PARAM);
        expectCode(() -> a.register(c.send, src.addr + PAGE / 2, 2 * PAGE, PtrType.CUDA), Code.INVALID_PARAM);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.CUDA);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.CUDA);
        for (int size : new int[] {1, PAGE + 17, 3 * PAGE}) {
            transfer(c, src, sr, dst, rr, size);
        }
    }

    // ---- tests: slots, FIFO, tags, asynchrony

    @Test
    void sixteenSendSlotsThenBusy() {
        Channel c = connect(a, b);
        int n = NetTransport.MAX_REQUESTS;
        Buf src = host(n * 1000);
        Buf dst = host(n * 1000);
        byte[] data = fillRandom(src, n * 1000);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            NetRequest s = a.isend(c.send, src.addr + i * 1000L, 1000, i, sr);
            assertThat(s).as("send %d of %d", i + 1, n).isNotNull();
            sends.add(s);
        }
        assertThat(a.isend(c.send, src.addr, 1000, 99, sr)).as("17th send without any completed").isNull();
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            recvs.add(postRecv(c, dst.addr + i * 1000L, 1000, rr));
        }
        awaitDone(a, sends.poll(), "first send");
        NetRequest extra = a.isend(c.send, src.addr, 1000, 99, sr);
        assertThat(extra).as("a send slot frees when its send tests done").isNotNull();
        drain(c, sends, recvs, dst);
        // The extra send may wait for its receive (the SPI does not promise buffering), so both go together.
        NetRequest extraRecv = postRecv(c, dst.addr, 1000, rr);
        drain(c, new ArrayDeque<>(List.of(extra)), new ArrayDeque<>(List.of(extraRecv)), dst);
        verify(dst, data, n * 1000);
    }

    @Test
    void aReceiveHoldsItsSlotUntilConsumed() {
        Channel c = connect(a, b);
        int n = NetTransport.MAX_REQUESTS;
        Buf src = host(n * 512);
        Buf dst = host(n * 512);
        byte[] data = fillRandom(src, n * 512);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        List<NetRequest> recvs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            recvs.add(postRecv(c, dst.addr + i * 512L, 512, rr));
        }
        assertThat(b.irecv(c.recv, dst.addr, 512, 0, rr)).as("17th receive").isNull();
        for (int i = 0; i < n; i++) {
            NetRequest s = postSend(c, src.addr + i * 512L, 512, sr);
            awaitDone(a, s, "send " + i);
        }
        for (int i = 0; i < n; i++) {
            awaitDone(b, recvs.get(i), "receive " + i);
        }
        assertThat(b.irecv(c.recv, dst.addr, 512, 0, rr)).as("17th receive: all done, none consumed").isNull();
        Unpacker u = unpacker();
        unpack(u, recvs.get(0), dst.addr, dst.kind);
        b.consumed(c.recv, recvs.get(0));
        NetRequest again = b.irecv(c.recv, dst.addr + 15 * 512L, 512, 0, rr);
        assertThat(again).as("a consumed receive frees its slot").isNotNull();
        tracked(again, dst.addr + 15 * 512L);
        for (int i = 1; i < n; i++) {
            unpack(u, recvs.get(i), dst.addr + i * 512L, dst.kind);
            b.consumed(c.recv, recvs.get(i));
        }
        verify(dst, data, n * 512);
        // the send is tested too: TCPX moves a send's data only from inside test()
        NetRequest last = postSend(c, src.addr + 15 * 512L, 512, sr);
        drain(c, new ArrayDeque<>(List.of(last)), new ArrayDeque<>(List.of(again)), dst);
        verify(dst, data, n * 512);
    }

    @Test
    void testAndConsumeAreFifo() {
        Channel c = connect(a, b);
        Buf src = host(2 * PAGE);
        Buf dst = host(2 * PAGE);
        byte[] data = fillRandom(src, 2 * PAGE);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r0 = postRecv(c, dst.addr, PAGE, rr);
        NetRequest r1 = postRecv(c, dst.addr + PAGE, PAGE, rr);
        expectCode(() -> b.test(r1), Code.INVALID_PARAM);
        expectCode(() -> b.consumed(c.recv, r0), Code.INVALID_PARAM);
        NetRequest s0 = postSend(c, src.addr, PAGE, sr);
        NetRequest s1 = postSend(c, src.addr + PAGE, PAGE, sr);
        LockSupport.parkNanos(20_000_000);
        expectCode(() -> a.test(s1), Code.INVALID_PARAM);
        awaitDone(a, s0, "send 0");
        awaitDone(a, s1, "send 1");
        awaitDone(b, r0, "receive 0");
        awaitDone(b, r1, "receive 1");
        Unpacker u = unpacker();
        unpack(u, r1, dst.addr + PAGE, dst.kind);
        expectCode(() -> b.consumed(c.recv, r1), Code.INVALID_PARAM);
        unpack(u, r0, dst.addr, dst.kind);
        b.consumed(c.recv, r0);
        b.consumed(c.recv, r1);
        verify(dst, data, 2 * PAGE);
    }

    @Test
    void tagsAreIgnoredAndMessagesMatchInPostingOrder() {
        Channel c = connect(a, b);
        int size = 10_000;
        Buf src = host(3 * size);
        Buf dst = host(3 * size);
        byte[] data = fillRandom(src, 3 * size);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        for (int i = 0; i < 3; i++) {
            long d = dst.addr + (long) i * size;
            recvs.add(tracked(require(b.irecv(c.recv, d, size, 3 - i, rr), "irecv"), d));
        }
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        for (int i = 0; i < 3; i++) {
            sends.add(require(a.isend(c.send, src.addr + (long) i * size, size, 1 + i, sr), "isend"));
        }
        drain(c, sends, recvs, dst);
        verify(dst, data, 3 * size);
    }

    @Test
    void postingNeverWaitsForThePeer() {
        Channel c = connect(a, b);
        int size = 4 << 20;
        Buf src = host(size);
        Buf dst = host(size);
        byte[] data = fillRandom(src, size);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        long t0 = System.nanoTime();
        NetRequest s = postSend(c, src.addr, size, sr);
        boolean sent = a.test(s); // kernel buffers may hold all of it; then the send is done (and recycled)
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("isend + test of 4 MiB with no receive posted")
                .isLessThan(Duration.ofSeconds(1));
        NetRequest r = postRecv(c, dst.addr, size, rr);
        drain(c, sent ? new ArrayDeque<>() : new ArrayDeque<>(List.of(s)), new ArrayDeque<>(List.of(r)), dst);
        verify(dst, data, size);
    }

    @Test
    void aReceiveIsNotDoneBeforeItsDataIsSent() {
        Channel c = connect(a, b);
        Buf src = host(PAGE);
        Buf dst = host(PAGE);
        byte[] data = fillRandom(src, PAGE);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r = postRecv(c, dst.addr, PAGE, rr);
        for (int i = 0; i < 50; i++) {
            assertThat(b.test(r)).as("receive tested before anything was sent").isFalse();
            LockSupport.parkNanos(2_000_000);
        }
        NetRequest s = postSend(c, src.addr, PAGE, sr);
        drain(c, new ArrayDeque<>(List.of(s)), new ArrayDeque<>(List.of(r)), dst);
        verify(dst, data, PAGE);
    }

    @Test
    void manyMessagesInAWindowArriveIntactAndInOrder() {
        Channel c = connect(a, b);
        int messages = 48;
        int[] sizes = new int[messages];
        long[] offsets = new long[messages + 1];
        for (int i = 0; i < messages; i++) {
            sizes[i] = random.nextInt(256 * 1024) + 1;
            offsets[i + 1] = offsets[i] + sizes[i];
        }
        int total = (int) offsets[messages];
        Buf src = host(total);
        Buf dst = host(total);
        byte[] data = fillRandom(src, total);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        ArrayDeque<Long> recvDst = new ArrayDeque<>();
        Unpacker u = unpacker();
        int posted = 0;
        int received = 0;
        int sent = 0;
        long deadline = System.nanoTime() + deadline().toNanos();
        while (received < messages) {
            while (posted < messages && sends.size() < 12 && recvs.size() < 12) {
                NetRequest r = b.irecv(c.recv, dst.addr + offsets[posted], sizes[posted], posted, rr);
                if (r == null) {
                    break;
                }
                recvs.add(r);
                recvDst.add(dst.addr + offsets[posted]);
                sends.add(postSend(c, src.addr + offsets[posted], sizes[posted], sr));
                posted++;
            }
            if (!sends.isEmpty() && a.test(sends.peek())) {
                sends.poll();
                sent++;
            }
            if (!recvs.isEmpty() && b.test(recvs.peek())) {
                NetRequest r = recvs.poll();
                unpack(u, r, recvDst.poll(), dst.kind);
                b.consumed(c.recv, r);
                received++;
            }
            checkDeadline(deadline, "window of " + messages + " messages: " + received + " received, " + sent + " sent");
            LockSupport.parkNanos(50_000);
        }
        verify(dst, data, total);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 4095, 4096, 4097, 512 * 1024 - 1, 512 * 1024, 512 * 1024 + 1, 4 << 20})
    void transfersEveryByte(int size) {
        roundTrip(connect(a, b), size);
    }

    // ---- tests: devmem receives

    @Test
    void devmemReceivesAreFragmentsCoveringTheReceiveExactlyOnce() {
        Channel c = connect(a, b);
        boolean declared = b.capabilities().contains(Capability.DEVMEM_RECEIVE);
        PtrType type = declared ? devmemPtrType() : PtrType.HOST;
        for (int size : new int[] {3 * PAGE + 123, 512 * 1024}) {
            Buf src = type == PtrType.CUDA ? cuda(size) : host(size);
            Buf dst = type == PtrType.CUDA ? cuda(size) : host(size);
            byte[] data = fillRandom(src, size);
            poison(dst, data);
            MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, type);
            MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, type);
            NetRequest r = postRecv(c, dst.addr, size, rr);
            NetRequest s = postSend(c, src.addr, size, sr);
            awaitDone(a, s, "send");
            awaitDone(b, r, "receive");
            if (!declared) {
                assertThat(r.fragmentCount()).as("without DEVMEM_RECEIVE receives land in place").isZero();
                verify(dst, data, size);
                b.consumed(c.recv, r);
                continue;
            }
            checkFragments(r, size);
            Unpacker u = unpacker();
            unpack(u, r, dst.addr, dst.kind);
            b.consumed(c.recv, r);
            verify(dst, data, size);
        }
    }

    // ---- tests: close and peer death

    @Test
    void closeWhileBusyDoesNotHangAndVoidsRequests() {
        Channel c1 = connect(a, b);
        Channel c2 = connect(a, b);
        int size = 4 << 20;
        Buf buf = host(size);
        MemoryRegistration rr = b.register(c1.recv, buf.addr, buf.capacity, PtrType.HOST);
        MemoryRegistration sr = a.register(c2.send, buf.addr, buf.capacity, PtrType.HOST);
        List<NetRequest> recvs = new ArrayList<>();
        List<NetRequest> sends = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            recvs.add(postRecv(c1, buf.addr, size, rr));
            sends.add(postSend(c2, buf.addr, size, sr));
        }
        assertTimeoutPreemptively(deadline(), () -> {
            b.closeRecv(c1.recv);
            a.closeSend(c2.send);
        }, "closing busy comms hung");
        assertThatThrownBy(() -> b.test(recvs.get(0))).isInstanceOf(TransferException.class);
        assertThatThrownBy(() -> a.test(sends.get(0))).isInstanceOf(TransferException.class);
        assertThatThrownBy(() -> b.irecv(c1.recv, buf.addr, 1, 0, rr)).isInstanceOf(TransferException.class);
        assertThatThrownBy(() -> a.isend(c2.send, buf.addr, 1, 0, sr)).isInstanceOf(TransferException.class);
    }

    @Test
    void peerCloseFailsPendingReceivesWithRemoteDisconnect() {
        Channel c = connect(a, b);
        Buf dst = host(PAGE);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r = postRecv(c, dst.addr, PAGE, rr);
        a.closeSend(c.send);
        TransferException e = awaitFailure(() -> b.test(r), "receive whose sender closed");
        assertThat(e.code()).isEqualTo(Code.REMOTE_DISCONNECT);
        assertThatThrownBy(() -> b.irecv(c.recv, dst.addr, PAGE, 0, rr))
                .isInstanceOfSatisfying(TransferException.class, x -> assertThat(x.code()).isEqualTo(Code.REMOTE_DISCONNECT));
    }

    @Test
    void peerCloseFailsSendsWithRemoteDisconnect() {
        Channel c = connect(a, b);
        int size = 1 << 20;
        Buf src = host(size);
        MemoryRegistration sr = a.register(c.send, src.addr, src.capacity, PtrType.HOST);
        b.closeRecv(c.recv);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        TransferException e = awaitFailure(() -> {
            NetRequest s = a.isend(c.send, src.addr, size, 0, sr);
            if (s != null) {
                sends.add(s);
            }
            if (!sends.isEmpty() && a.test(sends.peek())) {
                sends.poll(); // went into kernel buffers before the close was noticed; keep sending
            }
            return false;
        }, "sends to a closed receiver");
        assertThat(e.code()).isEqualTo(Code.REMOTE_DISCONNECT);
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
        MemoryRegistration sr = f.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r = postRecv(c, dst.addr, size, rr);
        NetRequest s = require(f.isend(c.send, src.addr, size, 0, sr), "isend");
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
        Buf src = host(PAGE);
        Buf dst = host(PAGE);
        byte[] data = fillRandom(src, PAGE);
        poison(dst, data);
        MemoryRegistration sr = f.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r = postRecv(c, dst.addr, PAGE, rr);
        long t0 = System.nanoTime();
        NetRequest s = require(f.isend(c.send, src.addr, PAGE, 0, sr), "isend");
        assertThat(f.test(s)).as("the first test right after isend").isFalse();
        awaitDone(f, s, "delayed send");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(delay);
        awaitDone(b, r, "receive");
        unpack(unpacker(), r, dst.addr, dst.kind);
        b.consumed(c.recv, r);
        verify(dst, data, PAGE);
    }

    /** True if declared; otherwise checks that asking for the fault is NOT_SUPPORTED. */
    private boolean faultInjection(TckFaults faults) {
        if (a.capabilities().contains(Capability.FAULT_INJECTION)) {
            return true;
        }
        expectCode(() -> track(newFaultyTransport(faults)), Code.NOT_SUPPORTED);
        return false;
    }

    // ---- helpers: channels and requests

    /** One direction: {@code send} on the sender transport, {@code recv} on the receiver transport. */
    protected record Channel(NetTransport sender, SendComm send, NetTransport receiver, RecvComm recv) {
    }

    protected final Channel connect(NetTransport from, NetTransport to) {
        return connect(from, to, to.listen(device()));
    }

    /** Polls connect and accept in turn until both return their comm. */
    protected final Channel connect(NetTransport from, NetTransport to, Listener l) {
        byte[] handle = l.handle();
        SendComm s = null;
        RecvComm r = null;
        long deadline = System.nanoTime() + deadline().toNanos();
        while (s == null || r == null) {
            if (s == null) {
                s = from.connect(device(), handle);
            }
            if (r == null) {
                r = to.accept(l);
            }
            checkDeadline(deadline, "connect/accept");
            LockSupport.parkNanos(1_000_000);
        }
        return new Channel(from, s, to, r);
    }

    private NetRequest postSend(Channel c, long addr, int size, MemoryRegistration reg) {
        return require(c.sender.isend(c.send, addr, size, 0, reg), "isend with free slots");
    }

    private NetRequest postRecv(Channel c, long addr, int size, MemoryRegistration reg) {
        return tracked(require(c.receiver.irecv(c.recv, addr, size, 0, reg), "irecv with free slots"), addr);
    }

    /** Remembers where a receive's fragments unpack to (requests are pooled: the latest post wins). */
    private NetRequest tracked(NetRequest r, long destination) {
        destinations.put(r, destination);
        return r;
    }

    private static NetRequest require(NetRequest r, String what) {
        assertThat(r).as(what + " returned BUSY").isNotNull();
        return r;
    }

    private void awaitDone(NetTransport t, NetRequest r, String what) {
        long deadline = System.nanoTime() + deadline().toNanos();
        while (!t.test(r)) {
            checkDeadline(deadline, what);
            LockSupport.parkNanos(100_000);
        }
    }

    /** Completes sends and receives (FIFO per comm), unpacking and consuming the receives. */
    private void drain(Channel c, ArrayDeque<NetRequest> sends, ArrayDeque<NetRequest> recvs, Buf dst) {
        long deadline = System.nanoTime() + deadline().toNanos();
        Unpacker u = unpacker();
        while (!sends.isEmpty() || !recvs.isEmpty()) {
            if (!sends.isEmpty() && c.sender.test(sends.peek())) {
                sends.poll();
            }
            if (!recvs.isEmpty() && c.receiver.test(recvs.peek())) {
                NetRequest r = recvs.poll();
                unpack(u, r, destinationOf(r, dst), dst.kind);
                c.receiver.consumed(c.recv, r);
            }
            checkDeadline(deadline, sends.size() + " sends and " + recvs.size() + " receives outstanding");
            LockSupport.parkNanos(50_000);
        }
    }

    /** Destinations are tracked by the tests that need them; the rest receive at the buffer's start. */
    private final java.util.IdentityHashMap<NetRequest, Long> destinations = new java.util.IdentityHashMap<>();

    private long destinationOf(NetRequest r, Buf dst) {
        Long d = destinations.remove(r);
        return d != null ? d : dst.addr;
    }

    private TransferException awaitFailure(ThrowingCheck step, String what) {
        long deadline = System.nanoTime() + deadline().toNanos();
        while (true) {
            try {
                if (step.done()) {
                    fail(what + ": completed, expected a TransferException");
                }
            } catch (TransferException e) {
                return e;
            }
            checkDeadline(deadline, what + ": no failure surfaced");
            LockSupport.parkNanos(1_000_000);
        }
    }

    @FunctionalInterface
    private interface ThrowingCheck {
        boolean done();
    }

    private void checkDeadline(long deadlineNanos, String what) {
        if (System.nanoTime() - deadlineNanos > 0) {
            fail(what + ": not done within " + deadline() + " (seed " + seed + ")");
        }
    }

    private static void expectCode(Runnable r, Code code) {
        assertThatThrownBy(r::run).isInstanceOfSatisfying(TransferException.class,
                e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(code));
    }

    private Unpacker unpacker() {
        Unpacker u = newUnpacker();
        unpackers.add(u);
        return u;
    }

    /** Unpacks a completed receive's fragments (if any) and waits for the batch. */
    private void unpack(Unpacker u, NetRequest r, long destination, MemoryKind kind) {
        if (r.fragmentCount() == 0) {
            return;
        }
        u.add(r, destination, kind);
        long ticket = u.submit();
        long deadline = System.nanoTime() + deadline().toNanos();
        while (ticket != 0 && !u.isDone(ticket)) {
            checkDeadline(deadline, "unpack");
            LockSupport.parkNanos(100_000);
        }
    }

    /** Fragments: in bounds of a page each, destinations covering [0, size) exactly once. */
    private static void checkFragments(NetRequest r, int size) {
        int n = r.fragmentCount();
        assertThat(n).as("fragments of a devmem receive of %d bytes", size).isBetween(size == 0 ? 0 : 1,
                NetRequest.MAX_FRAGMENTS);
        long[][] frags = new long[n][];
        for (int i = 0; i < n; i++) {
            long rec = r.fragmentsAddress() + (long) i * NetRequest.FRAGMENT_BYTES;
            long src = Integer.toUnsignedLong(NativeMemory.getInt(rec));
            long len = Integer.toUnsignedLong(NativeMemory.getInt(rec + 4));
            long dst = NativeMemory.getLong(rec + 8);
            assertThat(len).as("fragment %d length", i).isBetween(1L, (long) PAGE);
            assertThat(src % PAGE + len).as("fragment %d stays inside its bounce page", i).isLessThanOrEqualTo(PAGE);
            frags[i] = new long[] {dst, len};
        }
        Arrays.sort(frags, (x, y) -> Long.compare(x[0], y[0]));
        long covered = 0;
        for (long[] f : frags) {
            assertThat(f[0]).as("fragments cover the receive without gap or overlap").isEqualTo(covered);
            covered += f[1];
        }
        assertThat(covered).as("fragments cover the whole receive").isEqualTo(size);
    }

    // ---- helpers: round trips

    private void roundTrip(Channel c, int size) {
        Buf src = host(size);
        Buf dst = host(size);
        MemoryRegistration sr = c.sender.register(c.send, src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = c.receiver.register(c.recv, dst.addr, dst.capacity, PtrType.HOST);
        transfer(c, src, sr, dst, rr, size);
    }

    private void transfer(Channel c, Buf src, MemoryRegistration sr, Buf dst, MemoryRegistration rr, int size) {
        byte[] data = fillRandom(src, size);
        poison(dst, data);
        NetRequest r = postRecv(c, dst.addr, size, rr);
        NetRequest s = postSend(c, src.addr, size, sr);
        drain(c, new ArrayDeque<>(List.of(s)), new ArrayDeque<>(List.of(r)), dst);
        verify(dst, data, size);
    }

    // ---- helpers: memory

    /** A buffer: host memory with guard pages around it, or CUDA memory. Capacity is page-rounded. */
    protected final class Buf {
        final long addr;
        final int capacity;
        final MemoryKind kind;
        private final long raw;
        private final MemoryDescriptor device;

        private Buf(long addr, int capacity, MemoryKind kind, long raw, MemoryDescriptor device) {
            this.addr = addr;
            this.capacity = capacity;
            this.kind = kind;
            this.raw = raw;
            this.device = device;
        }

        void free() {
            if (device != null) {
                deviceMemory().free(device);
            } else {
                NativeMemory.free(raw);
            }
        }
    }

    private static int capacityFor(int size) {
        return Math.max(PAGE, (size + PAGE - 1) & -PAGE);
    }

    protected final Buf host(int size) {
        int cap = capacityFor(size);
        long raw = NativeMemory.allocate(cap + 2L * GUARD, PAGE);
        NativeMemory.fill(raw, cap + 2L * GUARD, GUARD_BYTE);
        Buf b = new Buf(raw + GUARD, cap, MemoryKind.DRAM, raw, null);
        buffers.add(b);
        return b;
    }

    protected final Buf cuda(int size) {
        int cap = capacityFor(size);
        MemoryDescriptor d = deviceMemory().allocate(MemoryKind.VRAM, cap, 0);
        Buf b = new Buf(d.address(), cap, MemoryKind.VRAM, 0, d);
        buffers.add(b);
        return b;
    }

    private byte[] fillRandom(Buf buf, int size) {
        byte[] data = new byte[size];
        random.nextBytes(data);
        write(buf, data);
        return data;
    }

    /** Every destination byte starts as the complement of what must arrive, so a missed byte shows. */
    private void poison(Buf buf, byte[] expected) {
        byte[] p = new byte[expected.length];
        for (int i = 0; i < p.length; i++) {
            p[i] = (byte) ~expected[i];
        }
        write(buf, p);
    }

    private void write(Buf buf, byte[] data) {
        if (buf.kind == MemoryKind.DRAM) {
            NativeMemory.put(buf.addr, data, 0, data.length);
            return;
        }
        long tmp = NativeMemory.allocate(Math.max(1, data.length), PAGE);
        try {
            NativeMemory.put(tmp, data, 0, data.length);
            deviceMemory().copy(MemoryDescriptor.vram(buf.addr, data.length, 0), MemoryDescriptor.dram(tmp, data.length));
        } finally {
            NativeMemory.free(tmp);
        }
    }

    private void verify(Buf buf, byte[] expected, int size) {
        byte[] actual = new byte[size];
        if (buf.kind == MemoryKind.DRAM) {
            NativeMemory.get(buf.addr, actual, 0, size);
            for (long g = buf.raw; g < buf.addr; g++) {
                if (NativeMemory.getByte(g) != GUARD_BYTE) {
                    fail("guard byte " + (buf.addr - g) + " before the buffer was overwritten");
                }
            }
            for (long g = buf.addr + size; g < buf.addr + buf.capacity + GUARD; g++) {
                // the test wrote only [0, size): anything after it must still be guard
                if (NativeMemory.getByte(g) != GUARD_BYTE) {
                    fail("byte " + (g - buf.addr) + " past the " + size + "-byte transfer was overwritten");
                }
            }
        } else {
            long tmp = NativeMemory.allocate(Math.max(1, size), PAGE);
            try {
                deviceMemory().copy(MemoryDescriptor.dram(tmp, size), MemoryDescriptor.vram(buf.addr, size, 0));
                NativeMemory.get(tmp, actual, 0, size);
            } finally {
                NativeMemory.free(tmp);
            }
        }
        for (int i = 0; i < size; i++) {
            if (actual[i] != expected[i]) {
                fail("byte " + i + " of " + size + " is " + actual[i] + ", expected " + expected[i] + " (seed " + seed + ")");
            }
        }
    }
}
