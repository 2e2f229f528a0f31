package io.tcpx4j.domain.testing;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.testing.InMemoryNetTransportDouble.Config;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The rules the transport double promises beyond the SPI contract (its configuration, fabric faults,
 * counters, strictness TCPX does not check); each test breaks if its rule is dropped. The contract
 * itself is checked by the conformance suite: transport-tck's InMemoryDoubleConformanceTest.
 */
class InMemoryNetTransportDoubleTest {

    private static final int PAGE = NativeMemory.PAGE;

    private final InMemoryFabric fabric = new InMemoryFabric();
    private final InMemoryNetTransportDouble a = fabric.newTransport();
    private final InMemoryNetTransportDouble b = fabric.newTransport();
    private final InMemoryNetTransportDouble plainB =
            fabric.newTransport(Config.defaults().without(Capability.DEVMEM_RECEIVE));
    private final List<Long> allocations = new ArrayList<>();

    @AfterEach
    void freeEverything() {
        fabric.close();
        allocations.forEach(NativeMemory::free);
    }

    // ---- connection set-up ----

    @Test
    void listenerHandlesAre128BytesReturnedAsCopiesAndDistinct() {
        Listener l1 = b.listen(0);
        Listener l2 = b.listen(0);
        byte[] h = l1.handle();
        assertThat(h).hasSize(Listener.HANDLE_SIZE);
        h[0] ^= 1;
        assertThat(l1.handle()).isNotEqualTo(h);
        assertThat(l1.handle()).isNotEqualTo(l2.handle());
    }

    @Test
    void connectAnswersNotYetFirstAndAcceptWaitsForTheConnect() {
        Listener l = b.listen(0);
        assertThat(b.accept(l)).isNull();
        assertThat(a.connect(0, l.handle())).isNull();
        RecvComm recv = b.accept(l);
        assertThat(recv).isNotNull();
        assertThat(a.connect(0, l.handle())).isNotNull();
    }

    @Test
    void connectNotYetCallsAreConfigurable() {
        InMemoryNetTransportDouble slow = fabric.newTransport(Config.defaults().withConnectNotYetCalls(3));
        Listener l = b.listen(0);
        for (int i = 0; i < 3; i++) {
            assertThat(slow.connect(0, l.handle())).as("call %d", i).isNull();
        }
        assertThat(slow.connect(0, l.handle())).isNotNull();
    }

    @Test
    void aListenerYieldsExactlyOneCommThenAcceptIsInvalid() {
        Listener l = plainB.listen(0);
        assertThat(a.connect(0, l.handle())).isNull();
        RecvComm recv = plainB.accept(l);
        assertThat(recv).isNotNull();
        assertCode(TransferException.Code.INVALID_PARAM, () -> plainB.accept(l));
        SendComm send = a.connect(0, l.handle());
        Conn c = new Conn(a, send, plainB, recv);
        long src = filled(64, 1);
        long dst = alloc(64);
        NetRequest s = c.send(src, 64);
        NetRequest r = c.recv(dst, 64);
        assertThat(plainB.test(r)).isTrue();
        assertPattern(dst, 64, 1);
        assertThat(a.test(s)).isTrue();
    }

    @Test
    void corruptForeignOrClosedHandlesAreInvalid() {
        Listener l = b.listen(0);
        for (int i : new int[] {0, 5, 12, 20, 64, 127}) {
            byte[] h = l.handle();
            h[i] ^= 0x40;
            assertCode(TransferException.Code.INVALID_PARAM, () -> a.connect(0, h));
        }
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.connect(0, Arrays.copyOf(l.handle(), 64)));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.connect(0, null));
        try (InMemoryFabric other = new InMemoryFabric()) {
            byte[] foreign = other.newTransport().listen(0).handle();
            assertCode(TransferException.Code.INVALID_PARAM, () -> a.connect(0, foreign));
        }
        byte[] stale = l.handle();
        b.closeListen(l);
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.connect(0, stale));
        assertThat(a.commsAlive()).isZero();
    }

    @Test
    void closingAListenerFailsTheConnectsItHasNotAccepted() {
        Listener l = b.listen(0);
        byte[] handle = l.handle();
        assertThat(a.connect(0, handle)).isNull();
        b.closeListen(l);
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> a.connect(0, handle));
        assertCode(TransferException.Code.INVALID_PARAM, () -> b.accept(l));
        assertCode(TransferException.Code.INVALID_PARAM, () -> b.closeListen(l));
    }

    @Test
    void postsAreBusyUntilThePeerSideExists() {
        Listener l = b.listen(0);
        assertThat(a.connect(0, l.handle())).isNull();
        RecvComm recv = b.accept(l);
        long buf = alloc(PAGE);
        MemoryRegistration rr = b.register(recv, buf, PAGE, PtrType.HOST);
        assertThat(b.irecv(recv, buf, PAGE, 0, rr)).as("connect has not returned the send comm").isNull();

        Listener l2 = b.listen(0);
        assertThat(a.connect(0, l2.handle())).isNull();
        SendComm early = a.connect(0, l2.handle());
        MemoryRegistration sr = a.register(early, buf, PAGE, PtrType.HOST);
        assertThat(a.isend(early, buf, PAGE, 0, sr)).as("not accepted yet").isNull();
        b.accept(l2);
        assertThat(a.isend(early, buf, PAGE, 0, sr)).isNotNull();
    }

    // ---- slots ----

    @Test
    void outstandingCountersFollowTheSlotsAndFinishedRequestsAreVoid() {
        Conn c = connect(a, b);
        long src = filled(PAGE, 3);
        long dst = alloc(PAGE);
        List<NetRequest> sends = new ArrayList<>();
        for (int i = 0; i < NetTransport.MAX_REQUESTS; i++) {
            sends.add(c.send(src, 64));
        }
        assertThat(a.outstanding(c.send)).isEqualTo(16);
        List<NetRequest> recvs = new ArrayList<>();
        for (int i = 0; i < NetTransport.MAX_REQUESTS; i++) {
            recvs.add(c.recv(dst, 64));
        }
        for (NetRequest s : sends) {
            assertThat(a.test(s)).isTrue();
        }
        assertThat(a.outstanding(c.send)).isZero();
        for (NetRequest r : recvs) {
            assertThat(b.test(r)).isTrue();
        }
        assertThat(b.outstanding(c.recv)).as("tested done, not consumed").isEqualTo(16);
        b.consumed(c.recv, recvs.get(0));
        assertThat(b.outstanding(c.recv)).isEqualTo(15);
        assertThat(a.maxOutstanding(c.send)).isEqualTo(16);
        assertThat(a.maxOutstandingSends()).isEqualTo(16);
        assertThat(b.maxOutstandingRecvs()).isEqualTo(16);
        // Stricter than the SPI asks: a finished request is void, not silently reusable.
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.test(sends.get(0)));
        assertCode(TransferException.Code.INVALID_PARAM, () -> b.test(recvs.get(1)));
        assertCode(TransferException.Code.INVALID_PARAM, () -> b.consumed(c.recv, recvs.get(0)));
    }

    // ---- matching and completion ----

    @Test
    void dataNeverMovesInsideThePostingCall() {
        Conn c = connect(a, plainB);
        long src = filled(256, 5);
        long dst = alloc(256);
        NetRequest r = c.recv(dst, 256);
        NetRequest s = c.send(src, 256);
        assertThat(NativeMemory.getLong(dst)).as("nothing landed at post time").isZero();
        assertThat(fabric.progress()).isEqualTo(1);
        assertThat(fabric.progress()).isZero();
        assertPattern(dst, 256, 5);
        assertThat(a.test(s)).isTrue();
        assertThat(plainB.test(r)).isTrue();
    }

    @Test
    void aSendCompletesOnlyOnceAReceiveTookItsData() {
        Conn c = connect(a, plainB);
        long src = filled(64, 6);
        NetRequest s = c.send(src, 64);
        assertThat(a.test(s)).isFalse();
        assertThat(a.test(s)).isFalse();
        NetRequest r = c.recv(alloc(64), 64);
        assertThat(a.test(s)).isTrue();
        assertThat(plainB.test(r)).isTrue();
    }

    @Test
    void aSendLargerThanItsReceiveFailsTheReceiveWithBackendAndBreaksTheConnection() {
        Conn c = connect(a, b);
        long src = filled(2 * PAGE, 9);
        NetRequest s = c.send(src, 2 * PAGE);
        NetRequest r = c.recv(alloc(PAGE), PAGE);
        assertCode(TransferException.Code.BACKEND, () -> b.test(r));
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> a.test(s));
        assertThat(b.outstanding(c.recv)).isZero();
        assertThat(a.outstanding(c.send)).isZero();
    }

    @Test
    void aShorterSendCompletesTheReceiveWithTheSendersSize() {
        Conn c = connect(a, b);
        int sent = PAGE + 100;
        long src = filled(sent, 10);
        long dst = alloc(4 * PAGE);
        c.send(src, sent);
        NetRequest r = c.recv(dst, 4 * PAGE);
        assertThat(b.test(r)).isTrue();
        assertThat(r.size()).as("posted size, as TCPX reports nothing else").isEqualTo(4 * PAGE);
        assertThat(b.receivedSize(r)).isEqualTo(sent);
        assertThat(r.fragmentCount()).isEqualTo(2);
        CpuScatterGather.unpack(r, dst);
        assertPattern(dst, sent, 10);
        assertThat(NativeMemory.getByte(dst + sent)).isZero();
    }

    // ---- registrations ----

    @Test
    void registrationsBelongToOneCommAndBoundEveryPost() {
        Conn c1 = connect(a, plainB);
        Conn c2 = connect(a, plainB);
        long buf = alloc(2 * PAGE);
        MemoryRegistration onC1 = a.register(c1.send, buf, PAGE, PtrType.HOST);
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.isend(c2.send, buf, 64, 0, onC1));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.isend(c1.send, buf + PAGE - 10, 11, 0, onC1));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.isend(c1.send, buf - 1, 8, 0, onC1));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.isend(c1.send, buf, 64, 0, null));
        assertCode(TransferException.Code.INVALID_PARAM, () -> b.register(c1.send, buf, PAGE, PtrType.HOST));
        assertThat(a.isend(c1.send, buf + PAGE - 10, 10, 0, onC1)).isNotNull();
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.deregister(c1.send, onC1));
    }

    @Test
    void aDeregisteredRegistrationCannotBeUsed() {
        Conn c = connect(a, plainB);
        long buf = alloc(PAGE);
        MemoryRegistration reg = a.register(c.send, buf, PAGE, PtrType.HOST);
        a.deregister(c.send, reg);
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.isend(c.send, buf, 64, 0, reg));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.deregister(c.send, reg));
    }

    @Test
    void cudaRegistrationsMustBe4KiBAlignedAndNeedTheCapability() {
        Conn c = connect(a, plainB);
        long buf = alloc(3 * PAGE);
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.register(c.send, buf + 512, PAGE, PtrType.CUDA));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.register(c.send, buf, PAGE + 512, PtrType.CUDA));
        assertThat(a.register(c.send, buf, 2 * PAGE, PtrType.CUDA)).isNotNull();
        assertCode(TransferException.Code.NOT_SUPPORTED, () -> a.register(c.send, buf, PAGE, PtrType.DMABUF));

        InMemoryNetTransportDouble hostOnly = fabric.newTransport(Config.defaults().without(Capability.CUDA_MEMORY));
        Conn h = connect(hostOnly, plainB);
        assertCode(TransferException.Code.NOT_SUPPORTED, () -> hostOnly.register(h.send, buf, PAGE, PtrType.CUDA));
        assertThat(hostOnly.properties(0).supports(PtrType.CUDA)).isFalse();
        assertThat(a.properties(0).supports(PtrType.CUDA)).isTrue();
    }

    // ---- devmem ----

    @Test
    void devmemFragmentsCoverTheReceiveOnceInPermutedScatteredPages() {
        Conn c = connect(a, b);
        int size = 64 * PAGE + 123;
        long src = filled(size, 12);
        long dst = alloc(size);
        c.send(src, size);
        NetRequest r = c.recv(dst, size);
        assertThat(b.test(r)).isTrue();
        assertThat(NativeMemory.getLong(dst)).as("devmem: the destination is not written").isZero();
        assertThat(r.bounceKind()).isEqualTo(MemoryKind.DRAM);

        long[][] f = fragments(r);
        assertThat(f.length).isEqualTo(65);
        Set<Long> dstOffs = new HashSet<>();
        Set<Long> srcOffs = new HashSet<>();
        long covered = 0;
        boolean inOrder = true;
        for (int i = 0; i < f.length; i++) {
            long srcOff = f[i][0];
            long len = f[i][1];
            long dstOff = f[i][2];
            assertThat(dstOff % PAGE).isZero();
            assertThat(srcOff % PAGE).isZero();
            assertThat(len).isEqualTo(dstOff == 64L * PAGE ? 123 : PAGE);
            assertThat(dstOffs.add(dstOff)).as("dstOff %d listed twice", dstOff).isTrue();
            assertThat(srcOffs.add(srcOff)).as("bounce page %d used twice", srcOff).isTrue();
            covered += len;
            inOrder &= i == 0 || dstOff > f[i - 1][2];
        }
        assertThat(covered).isEqualTo(size);
        assertThat(inOrder).as("fragments listed in a random order").isFalse();
        long[][] byDst = f.clone();
        Arrays.sort(byDst, (x, y) -> Long.compare(x[2], y[2]));
        boolean contiguous = true;
        for (int i = 1; i < byDst.length; i++) {
            contiguous &= byDst[i][0] - byDst[i - 1][0] == PAGE;
        }
        assertThat(contiguous).as("consecutive pieces land in scattered bounce pages").isFalse();

        CpuScatterGather.unpack(r, dst);
        assertPattern(dst, size, 12);
    }

    @Test
    void withoutDevmemDataLandsInPlaceWithNoFragments() {
        Conn c = connect(a, plainB);
        long src = filled(3 * PAGE, 13);
        long dst = alloc(3 * PAGE);
        c.send(src, 3 * PAGE);
        NetRequest r = c.recv(dst, 3 * PAGE);
        assertThat(plainB.test(r)).isTrue();
        assertThat(r.fragmentCount()).isZero();
        assertPattern(dst, 3 * PAGE, 13);
        assertThat(plainB.properties(0).netDeviceType()).isZero();
        assertThat(b.properties(0).netDeviceType()).isEqualTo(DeviceProperties.NET_DEVICE_UNPACK);
    }

    @Test
    void bouncePagesArePoisonedAndFragmentsVoidAfterConsume() {
        Conn c = connect(a, b);
        long src = filled(2 * PAGE, 14);
        c.send(src, 2 * PAGE);
        NetRequest r = c.recv(alloc(2 * PAGE), 2 * PAGE);
        assertThat(b.test(r)).isTrue();
        long page = r.bounceBase() + fragments(r)[0][0];
        assertThat(b.bouncePagesHeld()).isEqualTo(2);
        b.consumed(c.recv, r);
        assertThat(b.bouncePagesHeld()).isZero();
        for (int i = 0; i < PAGE; i++) {
            assertThat(NativeMemory.getByte(page + i)).isEqualTo(BouncePool.PAGE_POISON);
        }
        assertCode(TransferException.Code.INVALID_PARAM, r::fragmentCount);
    }

    @Test
    void fragmentsAreReadableOnlyBetweenTestedDoneAndConsumed() {
        Conn c = connect(a, b);
        NetRequest r = c.recv(alloc(PAGE), PAGE);
        NetRequest s = c.send(filled(PAGE, 15), PAGE);
        assertCode(TransferException.Code.INVALID_PARAM, r::fragmentCount);
        assertCode(TransferException.Code.INVALID_PARAM, s::fragmentCount);
        assertThat(b.test(r)).isTrue();
        assertThat(r.fragmentCount()).isEqualTo(1);
    }

    @Test
    void aDevmemReceiveWaitsForBouncePagesAndMayNotExceedThePool() {
        InMemoryNetTransportDouble small = fabric.newTransport(Config.defaults().withBouncePagesPerRecvComm(4));
        Conn c = connect(a, small);
        long src = filled(4 * PAGE, 16);
        c.send(src, 4 * PAGE);
        c.send(src, 4 * PAGE);
        NetRequest r1 = c.recv(alloc(4 * PAGE), 4 * PAGE);
        NetRequest r2 = c.recv(alloc(4 * PAGE), 4 * PAGE);
        assertThat(small.test(r1)).isTrue();
        assertThat(small.test(r2)).as("every page held by r1").isFalse();
        small.consumed(c.recv, r1);
        assertThat(small.test(r2)).isTrue();
        assertCode(TransferException.Code.INVALID_PARAM, () -> c.recv(alloc(5 * PAGE), 5 * PAGE));
        Conn big = connect(a, b);
        // Validated before anything is written, so the buffer need not be that large.
        assertCode(TransferException.Code.INVALID_PARAM,
                () -> big.tryRecv(alloc(PAGE), NetRequest.MAX_FRAGMENTS * PAGE + 1));
        assertThat(big.tryRecv(alloc(PAGE), PAGE)).isNotNull();
    }

    // ---- faults and closing ----

    @Test
    void aBrokenConnectionFailsBothSidesWithRemoteDisconnect() {
        Conn c = connect(a, b);
        Conn healthy = connect(a, b);
        NetRequest s = c.send(filled(64, 17), 64);
        NetRequest r = c.recv(alloc(64), 64);
        fabric.breakConnection(c.recv);
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> b.test(r));
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> a.test(s));
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> c.trySend(filled(64, 0), 64));
        assertThat(a.outstanding(c.send)).isZero();
        assertThat(b.outstanding(c.recv)).isZero();

        NetRequest hs = healthy.send(filled(64, 18), 64);
        healthy.recv(alloc(64), 64);
        assertThat(a.test(hs)).as("other connections unaffected").isTrue();
    }

    @Test
    void aDropAfterBytesBreaksTheConnectionAtThatMessage() {
        Conn c = connect(a, plainB);
        fabric.dropAfterBytes(c.send, 100);
        long src = filled(64, 19);
        NetRequest s1 = c.send(src, 64);
        NetRequest s2 = c.send(src, 64);
        NetRequest r1 = c.recv(alloc(64), 64);
        long r2Dst = alloc(64);
        NetRequest r2 = c.recv(r2Dst, 64);
        assertThat(plainB.test(r1)).as("delivered before the drop").isTrue();
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> plainB.test(r2));
        assertThat(NativeMemory.getLong(r2Dst)).isZero();
        assertThat(a.test(s1)).isTrue();
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> a.test(s2));
    }

    @Test
    void closingTheSendCommFailsThePeersUnreportedReceivesEvenIfTheirDataLanded() {
        Conn c = connect(a, b);
        NetRequest s = c.send(filled(64, 20), 64);
        NetRequest r = c.recv(alloc(64), 64);
        assertThat(a.test(s)).isTrue();
        a.closeSend(c.send);
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> b.test(r));
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> c.tryRecv(alloc(64), 64));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.closeSend(c.send));
    }

    // ---- counters, lifecycle, ownership ----

    @Test
    void countersSeeCommsRegistrationsAndListenersUntilClosed() {
        Conn c = connect(a, b);
        assertThat(fabric.commsAlive()).isEqualTo(2);
        assertThat(a.registrationsAlive()).isEqualTo(1);
        assertThat(b.registrationsAlive()).isEqualTo(1);
        assertThat(b.listenersAlive()).isEqualTo(1);
        assertThat(a.sendComms()).containsExactly(c.send);
        assertThat(b.recvComms()).containsExactly(c.recv);

        a.closeSend(c.send);
        b.closeRecv(c.recv);
        assertThat(fabric.commsAlive()).isZero();
        assertThat(fabric.registrationsAlive()).isZero();
        assertThat(a.outstanding(c.send)).isZero();
        b.close();
        b.close();
        assertThat(fabric.listenersAlive()).isZero();
        assertCode(TransferException.Code.INVALID_PARAM, () -> b.listen(0));
    }

    @Test
    void closingATransportReleasesEverythingItHeld() {
        Conn c = connect(a, b);
        c.send(filled(PAGE, 22), PAGE);
        NetRequest r = c.recv(alloc(PAGE), PAGE);
        assertThat(b.test(r)).isTrue();
        b.close();
        assertThat(b.commsAlive()).isZero();
        assertThat(b.bouncePagesHeld()).isZero();
        assertThat(b.registrationsAlive()).isZero();
        assertCode(TransferException.Code.REMOTE_DISCONNECT, () -> c.trySend(filled(64, 0), 64));
    }

    @Test
    void objectsOfAnotherTransportOrADeviceThatDoesNotExistAreInvalid() {
        Conn c = connect(a, b);
        NetRequest r = c.recv(alloc(64), 64);
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.test(r));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.register(c.recv, alloc(64), 64, PtrType.HOST));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.listen(1));
        assertCode(TransferException.Code.INVALID_PARAM, () -> a.properties(-1));
        assertThat(fabric.newTransport(Config.defaults().withDevices(2)).properties(1).name()).isEqualTo("mem1");
    }

    // ---- threads ----

    @Test
    void twoEnginesProgressThreadsShareOneFabricSafely() throws Exception {
        Conn ab = connect(a, b);
        Conn ba = connect(b, a);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> onA = pool.submit(() -> pingPong(a, ab, ba, 31));
            Future<?> onB = pool.submit(() -> pingPong(b, ba, ab, 32));
            onA.get(20, TimeUnit.SECONDS);
            onB.get(20, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(a.maxOutstandingSends()).isLessThanOrEqualTo(NetTransport.MAX_REQUESTS);
        assertThat(fabric.bouncePagesHeld()).isZero();
    }

    /**
     * One engine's progress loop: sends {@code MESSAGES} patterned messages on {@code out}, receives
     * as many on {@code in} (the peer's {@code out}) and checks each, keeping up to 8 of each in flight.
     */
    private void pingPong(InMemoryNetTransportDouble self, Conn out, Conn in, int seed) {
        final int messages = 400;
        final int size = 3 * PAGE + 7;
        long src = filled(size, seed);
        long[] dst = new long[8];
        for (int i = 0; i < dst.length; i++) {
            dst[i] = alloc(size);
        }
        int peerSeed = seed == 31 ? 32 : 31;
        java.util.ArrayDeque<NetRequest> sends = new java.util.ArrayDeque<>();
        java.util.ArrayDeque<NetRequest> recvs = new java.util.ArrayDeque<>();
        int posted = 0;
        int sent = 0;
        int recvPosted = 0;
        int received = 0;
        while (sent < messages || received < messages) {
            if (posted < messages && sends.size() < 8) {
                NetRequest s = self.isend(out.send, src, size, 0, out.sendReg);
                if (s != null) {
                    sends.add(s);
                    posted++;
                }
            }
            if (recvPosted < messages && recvs.size() < 8) {
                NetRequest r = self.irecv(in.recv, dst[recvPosted % 8], size, 0, in.recvReg);
                if (r != null) {
                    recvs.add(r);
                    recvPosted++;
                }
            }
            fabric.progress();
            if (!sends.isEmpty() && self.test(sends.peekFirst())) {
                sends.pollFirst();
                sent++;
            }
            if (!recvs.isEmpty() && self.test(recvs.peekFirst())) {
                NetRequest r = recvs.pollFirst();
                long d = dst[received % 8];
                CpuScatterGather.unpack(r, d);
                self.consumed(in.recv, r);
                assertPattern(d, size, peerSeed);
                NativeMemory.fill(d, size, (byte) 0);
                received++;
            }
        }
    }

    // ---- helpers ----

    /** Both ends of one connection, each with one registration over the whole address space. */
    private final class Conn {
        final InMemoryNetTransportDouble sender;
        final SendComm send;
        final InMemoryNetTransportDouble receiver;
        final RecvComm recv;
        final MemoryRegistration sendReg;
        final MemoryRegistration recvReg;

        Conn(InMemoryNetTransportDouble sender, SendComm send, InMemoryNetTransportDouble receiver, RecvComm recv) {
            this.sender = sender;
            this.send = send;
            this.receiver = receiver;
            this.recv = recv;
            // One registration over everything lets each test pick buffers freely; range checks
            // have their own test with tight registrations.
            this.sendReg = sender.register(send, 1, Long.MAX_VALUE - 1, PtrType.HOST);
            this.recvReg = receiver.register(recv, 1, Long.MAX_VALUE - 1, PtrType.HOST);
        }

        NetRequest trySend(long address, int size) {
            return sender.isend(send, address, size, 0, sendReg);
        }

        NetRequest tryRecv(long address, int size) {
            return receiver.irecv(recv, address, size, 0, recvReg);
        }

        NetRequest send(long address, int size) {
            NetRequest r = trySend(address, size);
            assertThat(r).as("isend not busy").isNotNull();
            return r;
        }

        NetRequest recv(long address, int size) {
            NetRequest r = tryRecv(address, size);
            assertThat(r).as("irecv not busy").isNotNull();
            return r;
        }
    }

    private Conn connect(InMemoryNetTransportDouble sender, InMemoryNetTransportDouble receiver) {
        Listener l = receiver.listen(0);
        byte[] handle = l.handle();
        SendComm send = null;
        for (int i = 0; i < 10 && send == null; i++) {
            send = sender.connect(0, handle);
        }
        RecvComm recv = receiver.accept(l);
        assertThat(send).isNotNull();
        assertThat(recv).isNotNull();
        return new Conn(sender, send, receiver, recv);
    }

    private long alloc(long size) {
        long address = NativeMemory.allocate(size, PAGE);
        NativeMemory.fill(address, size, (byte) 0);
        synchronized (allocations) {
            allocations.add(address);
        }
        return address;
    }

    private long filled(int size, int seed) {
        long address = alloc(size);
        NativeMemory.put(address, pattern(size, seed), 0, size);
        return address;
    }

    private static byte[] pattern(int size, int seed) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            // Varies within every 4 KiB page and between pages, so a misplaced page shows.
            bytes[i] = (byte) (i * 31 + (i >>> 12) * 7 + seed);
        }
        return bytes;
    }

    private static void assertPattern(long address, int size, int seed) {
        byte[] actual = new byte[size];
        NativeMemory.get(address, actual, 0, size);
        assertThat(actual).isEqualTo(pattern(size, seed));
    }

    /** The fragment records of a received request as {srcOff, len, dstOff}, in listed order. */
    private static long[][] fragments(NetRequest r) {
        long[][] out = new long[r.fragmentCount()][];
        for (int i = 0; i < out.length; i++) {
            long rec = r.fragmentsAddress() + (long) i * NetRequest.FRAGMENT_BYTES;
            out[i] = new long[] {Integer.toUnsignedLong(NativeMemory.getInt(rec)),
                    Integer.toUnsignedLong(NativeMemory.getInt(rec + 4)), NativeMemory.getLong(rec + 8)};
        }
        return out;
    }

    private static void assertCode(TransferException.Code code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(TransferException.class,
                e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(code));
    }
}
