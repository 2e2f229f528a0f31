package io.tcpx4j.transport.tcpx;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Connection set-up as real plugins do it: single-use listeners (TCPX double-frees on a second
 * accept), plugins whose connect and accept block (nccl-fastsocket), deadlines for a peer that never
 * comes, and checks that are due only when a CUDA receive or registration needs them.
 */
class TcpxSetupTest {

    /** Bounds only the waits of a test that would otherwise hang; never a measurement. */
    private static final Duration HANG_GUARD = Duration.ofSeconds(30);
    private final List<TcpxTransport> transports = new ArrayList<>();
    private final List<Long> allocations = new ArrayList<>();

    @AfterEach
    void tearDown() {
        assertTimeoutPreemptively(HANG_GUARD, () -> transports.forEach(TcpxTransport::close), "close hung");
        allocations.forEach(NativeMemory::free);
    }

    private TcpxTransport open(String variant, Duration setupTimeout) {
        TcpxTransport t = TcpxTransport.open(TcpxOptions.defaults().withLibrary(TestPeers.path(variant))
                .withProbeInChildProcess(false).withSetupTimeout(setupTimeout), new HostMemory());
        transports.add(t);
        return t;
    }

    private long alloc(int size) {
        long a = NativeMemory.allocate(size, NativeMemory.PAGE);
        allocations.add(a);
        return a;
    }

    /** The peer's count of calls that would crash TCPX (second accept, CUDA registration without a PCI path). */
    private static long misuse(String variant) {
        Function f = TestPeers.extra(variant, "tcpx4j_testpeer_misuse");
        return f.invokeLong(new Object[0]);
    }

    private static <T> T pollUntil(Supplier<T> poll, String what) {
        long deadline = System.nanoTime() + HANG_GUARD.toNanos();
        T v;
        while ((v = poll.get()) == null) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " never happened");
            }
            Thread.onSpinWait();
        }
        return v;
    }

    // ---- a listener yields one comm

    @Test
    void theTestPeerReportsASecondAcceptAsMisuseLikeTcpxWouldCrash() {
        TcpxTransport t = open("v7", TcpxOptions.DEFAULT_SETUP_TIMEOUT);
        NetPlugin p = NetPlugin.open(TestPeers.path("v7"));
        TcpxListener l = (TcpxListener) t.listen(0);
        byte[] h = l.handle();
        Memory out = new Memory(8);
        long before = misuse("v7");
        pollUntil(() -> t.connect(0, h), "connect");
        pollUntil(() -> {
            out.setLong(0, 0);
            assertThat(p.accept(l.pointer, out, l.deviceHandleSlot)).isZero();
            return out.getLong(0) == 0 ? null : out.getLong(0);
        }, "raw accept");
        assertThat(p.accept(l.pointer, out, l.deviceHandleSlot)).as("second accept on one listen comm")
                .isEqualTo(NcclResult.INVALID_USAGE);
        assertThat(misuse("v7") - before).isEqualTo(1);
    }

    @Test
    void theTransportNeverCallsThePluginsAcceptAfterItYieldedTheComm() {
        TcpxTransport t = open("v7", TcpxOptions.DEFAULT_SETUP_TIMEOUT);
        long before = misuse("v7");
        TestPeers.Pair pair = TestPeers.Pair.connect(t);
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> t.accept(pair.listener()))
                    .isInstanceOfSatisfying(TransferException.class, e -> assertThat(e.code())
                            .isEqualTo(TransferException.Code.INVALID_PARAM))
                    .hasMessageContaining("already yielded its comm");
        }
        assertThat(misuse("v7")).as("the plugin never saw a second accept").isEqualTo(before);
        t.closeListen(pair.listener());
        roundTrip(t, pair.send(), pair.recv(), 8192);
    }

    // ---- plugins whose connect and accept block

    @Test
    void blockingConnectAndAcceptNeverBlockTheCaller() {
        TcpxTransport t = open("v7-blocking", TcpxOptions.DEFAULT_SETUP_TIMEOUT);
        Listener l = t.listen(0);
        // the peer's accept waits in poll(2) for a connection: the caller gets "not yet" meanwhile
        for (int i = 0; i < 5; i++) {
            assertThat(t.accept(l)).isNull();
        }
        pollUntil(() -> ((TcpxListener) l).accept.inCall() ? Boolean.TRUE : null, "the plugin's accept in flight");
        assertThat(t.accept(l)).as("while the plugin's accept waits for a peer").isNull();
        TestPeers.Pair pair = TestPeers.Pair.connect(t, l);
        roundTrip(t, pair.send(), pair.recv(), 3 * 1024 * 1024 + 17);
    }

    @Test
    void anAcceptWhosePeerNeverConnectsFailsAfterTheSetupTimeoutNamingThePluginAndCloseReturns() {
        TcpxTransport t = open("v7-blocking", Duration.ofMillis(300));
        Listener l = t.listen(0);
        TransferException e = awaitFailure(() -> t.accept(l));
        assertThat(e.code()).isEqualTo(TransferException.Code.BACKEND);
        assertThat(e.getMessage()).contains(t.pluginName(), "accept did not complete within 300 ms",
                "setupTimeout", "never connected");
        assertTimeoutPreemptively(HANG_GUARD, () -> t.closeListen(l), "closeListen waited for the blocked accept");
        assertThatThrownBy(() -> t.accept(l)).isInstanceOf(TransferException.class).hasMessageContaining("closed");
    }

    @Test
    void aConnectWhosePeerNeverAcceptsFailsAfterTheSetupTimeoutAndTheTransportGoesOn() {
        // long enough for the healthy connection below on a loaded machine
        TcpxTransport t = open("v7-blocking", Duration.ofSeconds(3));
        Listener l = t.listen(0); // nobody accepts: the blocking peer's connect waits for the accept
        byte[] h = l.handle();
        TransferException e = awaitFailure(() -> t.connect(0, h));
        assertThat(e.code()).isEqualTo(TransferException.Code.BACKEND);
        assertThat(e.getMessage()).contains(t.pluginName(), "connect did not complete within 3000 ms",
                "never accepted");
        assertTimeoutPreemptively(HANG_GUARD, () -> t.closeListen(l), "closeListen hung");
        TestPeers.Pair pair = TestPeers.Pair.connect(t);
        roundTrip(t, pair.send(), pair.recv(), 4096);
    }

    @Test
    void closingTheTransportWithSetupCallsBlockedInThePluginReturns() {
        TcpxTransport t = open("v7-blocking", TcpxOptions.DEFAULT_SETUP_TIMEOUT);
        Listener l = t.listen(0);
        Listener other = t.listen(0);
        assertThat(t.accept(l)).isNull();
        assertThat(t.connect(0, other.handle())).isNull();
        assertTimeoutPreemptively(HANG_GUARD, t::close, "close waited for blocked plugin calls");
        assertThatThrownBy(() -> t.accept(l)).isInstanceOf(TransferException.class);
    }

    /**
     * A listener whose connects take as long as TCPX's do (a connect thread per attempt, several sockets
     * each): the test peer's connect to its handle says "not yet" for {@code millis} after its first call.
     */
    private static Listener listenWithConnectTime(TcpxTransport t, int millis) {
        if (TestPeers.realPlugin() != null) {
            return t.listen(0); // a real plugin takes its own time
        }
        LibC.setenv(CONNECT_MS_ENV, Integer.toString(millis));
        try {
            return t.listen(0); // the peer reads the variable in listen and keeps it in the handle
        } finally {
            LibC.unsetenv(CONNECT_MS_ENV);
        }
    }

    private static final String CONNECT_MS_ENV = "TCPX4J_TESTPEER_CONNECT_MS";
    /** How long the test peer's connects take in the tests that set-up times matter to: TCPX-like. */
    private static final int PLUGIN_CONNECT_MS = 300;

    @Test
    void aConnectSlowerThanTheSetupTimeoutFailsAndOneWithinItConnects() {
        TestPeers.requireTestPeer(CONNECT_MS_ENV + " (a real plugin's connect time is its own)");
        TcpxTransport impatient = open("v7", Duration.ofMillis(PLUGIN_CONNECT_MS / 3));
        Listener l = listenWithConnectTime(impatient, PLUGIN_CONNECT_MS);
        byte[] h = l.handle();
        TransferException e = awaitFailure(() -> impatient.connect(0, h));
        assertThat(e.code()).isEqualTo(TransferException.Code.BACKEND);
        assertThat(e.getMessage()).contains("connect did not complete within " + PLUGIN_CONNECT_MS / 3 + " ms");
        TcpxTransport t = open("v7", Duration.ofMillis(10L * PLUGIN_CONNECT_MS));
        long t0 = System.nanoTime();
        TestPeers.Pair pair = TestPeers.Pair.connect(t, listenWithConnectTime(t, PLUGIN_CONNECT_MS));
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("the plugin's connect time")
                .isGreaterThanOrEqualTo(Duration.ofMillis(PLUGIN_CONNECT_MS));
        roundTrip(t, pair.send(), pair.recv(), 4096);
    }

    @Test
    void aSendCommThatArrivesAfterItsCallerStoppedAskingIsClosedNotLeaked() throws InterruptedException {
        Duration setupTimeout = Duration.ofMillis(4L * PLUGIN_CONNECT_MS);
        TcpxTransport t = open("v7", setupTimeout);
        Listener l = listenWithConnectTime(t, PLUGIN_CONNECT_MS);
        // the attempt starts (the plugin's connect takes a while, so the first call never has the comm);
        // its caller never asks again
        assertThat(t.connect(0, l.handle())).isNull();
        RecvComm recv = pollUntil(() -> t.accept(l), "accept");
        // past the attempt's deadline and one more setupTimeout: nobody will claim its comm
        Thread.sleep(2 * setupTimeout.toMillis() + 100);
        // a later connect drops abandoned attempts; its own listener's connect time keeps it from finishing at once
        assertThat(t.connect(0, listenWithConnectTime(t, PLUGIN_CONNECT_MS).handle())).isNull();
        long dst = alloc(4096);
        MemoryRegistration rr = t.register(recv, dst, 4096, PtrType.HOST);
        NetRequest r = pollUntil(() -> t.irecv(recv, dst, 4096, 0, rr), "irecv");
        TransferException e = awaitFailure(() -> {
            assertThat(t.test(r)).as("nothing was sent").isFalse();
            return null;
        });
        assertThat(e.code()).as("the unclaimed send comm was closed").isEqualTo(TransferException.Code.REMOTE_DISCONNECT);
    }

    private static TransferException awaitFailure(Supplier<Object> poll) {
        long deadline = System.nanoTime() + HANG_GUARD.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                assertThat(poll.get()).as("no comm may appear").isNull();
            } catch (TransferException e) {
                return e;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no failure");
    }

    // ---- checks due only when CUDA memory needs them

    @Test
    void aReceiveCommWithoutABounceBufferReceivesHostMemoryAndRefusesCudaReceives() {
        TestPeers.requireTestPeer("TCPX4J_TESTPEER_NO_BOUNCE");
        LibC.setenv("TCPX4J_TESTPEER_NO_BOUNCE", "1");
        TcpxTransport t;
        TestPeers.Pair pair;
        try {
            t = open("v7", TcpxOptions.DEFAULT_SETUP_TIMEOUT);
            pair = TestPeers.Pair.connect(t);
        } finally {
            LibC.unsetenv("TCPX4J_TESTPEER_NO_BOUNCE");
        }
        roundTrip(t, pair.send(), pair.recv(), 65536);
        long buf = alloc(4096);
        MemoryRegistration cuda = t.register(pair.recv(), buf, 4096, PtrType.CUDA);
        assertThatThrownBy(() -> t.irecv(pair.recv(), buf, 4096, 0, cuda))
                .isInstanceOfSatisfying(TransferException.class, e -> assertThat(e.code())
                        .isEqualTo(TransferException.Code.BACKEND))
                .hasMessageContaining("without a bounce buffer");
    }

    @Test
    void aDeviceWithoutAPciPathDeclaresNoCudaMemoryAndItsCudaRegistrationsNeverReachThePlugin() {
        TcpxTransport t = open("v7-nopci", TcpxOptions.DEFAULT_SETUP_TIMEOUT);
        assertThat(t.properties(0).pciPath()).isEmpty();
        assertThat(t.properties(0).supports(PtrType.CUDA)).as("the plugin's own pointer support").isTrue();
        assertThat(t.capabilities(0)).as("undeclared, so callers never try").doesNotContain(Capability.CUDA_MEMORY);
        TestPeers.Pair pair = TestPeers.Pair.connect(t);
        long buf = alloc(4096);
        long before = misuse("v7-nopci");
        assertThatThrownBy(() -> t.register(pair.send(), buf, 4096, PtrType.CUDA))
                .isInstanceOfSatisfying(TransferException.class, e -> assertThat(e.code())
                        .isEqualTo(TransferException.Code.NOT_SUPPORTED))
                .hasMessageContaining("no PCI path");
        assertThat(misuse("v7-nopci")).as("the plugin's regMr was not called").isEqualTo(before);
        t.deregister(pair.send(), t.register(pair.send(), buf, 4096, PtrType.HOST));
    }

    // ---- optional table entries

    @Test
    void aV8TableWithNullIrecvConsumedAndGetDeviceMrIsUsed() {
        NetPlugin p = NetPlugin.open(TestPeers.path("v8-nullopt"));
        assertThat(p.version()).isEqualTo(NetPluginVersion.V8);
        assertThat(p.has(NetSlot.IRECV_CONSUMED)).isFalse();
        assertThat(p.has(NetSlot.GET_DEVICE_MR)).isFalse();
        TcpxTransport t = open("v8-nullopt", TcpxOptions.DEFAULT_SETUP_TIMEOUT);
        TestPeers.Pair pair = TestPeers.Pair.connect(t);
        for (int i = 0; i < 40; i++) { // more receives than the 16 slots: each one's slot comes back
            roundTrip(t, pair.send(), pair.recv(), 1000 + i);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"v7", "v7-blocking", "v8-nullopt"})
    void connectionsComeUpOnEveryShapeOfPlugin(String variant) {
        TcpxTransport t = open(variant, TcpxOptions.DEFAULT_SETUP_TIMEOUT);
        for (int i = 0; i < 3; i++) {
            TestPeers.Pair pair = TestPeers.Pair.connect(t);
            roundTrip(t, pair.send(), pair.recv(), 12345);
        }
    }

    private void roundTrip(TcpxTransport t, SendComm send, RecvComm recv, int size) {
        long src = alloc(size);
        long dst = alloc(size);
        byte[] data = new byte[size];
        new java.util.Random(size).nextBytes(data);
        NativeMemory.put(src, data, 0, size);
        MemoryRegistration sr = t.register(send, src, size, PtrType.HOST);
        MemoryRegistration rr = t.register(recv, dst, size, PtrType.HOST);
        NetRequest r = pollUntil(() -> t.irecv(recv, dst, size, 0, rr), "irecv");
        NetRequest s = pollUntil(() -> t.isend(send, src, size, 0, sr), "isend");
        TestPeers.pump(t, s, r);
        t.consumed(recv, r);
        byte[] got = new byte[size];
        NativeMemory.get(dst, got, 0, size);
        assertThat(got).isEqualTo(data);
        t.deregister(send, sr);
        t.deregister(recv, rr);
    }
}
