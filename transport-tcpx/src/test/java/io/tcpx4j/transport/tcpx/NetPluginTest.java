package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.PtrType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The raw binding: probing, and the plugin behaviours the transport builds on. */
class NetPluginTest {

    @ParameterizedTest
    @CsvSource({"v5,V5", "v6,V6", "v7,V7", "v8,V8"})
    void probesTheNewestTableTheLibraryExports(String variant, NetPluginVersion expected) {
        NetPlugin p = NetPlugin.open(TestPeers.path(variant));
        assertThat(p.version()).isEqualTo(expected);
        assertThat(p.has(NetSlot.IRECV_CONSUMED)).isEqualTo(expected.deviceHandles());
        assertThat(p.has(NetSlot.REG_MR_DMA_BUF)).as("null in the peer, as in TCPX").isFalse();
    }

    @Test
    void missingLibraryIsNotSupportedWithTheLoaderMessage() {
        assertThatThrownBy(() -> NetPlugin.open("/nonexistent/libnccl-net.so"))
                .isInstanceOf(TransferException.class).hasMessageContaining("cannot load /nonexistent/libnccl-net.so");
    }

    /** What the transport maps to BUSY: the 17th request on a comm fails with ncclInternalError (3). */
    @Test
    void seventeenthIrecvIsInternalErrorAtThePluginLevel() {
        TcpxTransport t = TestPeers.transport("v7");
        try {
            TestPeers.Pair pair = TestPeers.Pair.connect(t);
            NetPlugin p = NetPlugin.open(TestPeers.path("v7"));
            TcpxComm.Recv c = (TcpxComm.Recv) pair.recv();
            long buf = NativeMemory.allocate(4096, 4096);
            try {
                TcpxRegistration reg = (TcpxRegistration) t.register(pair.recv(), buf, 4096, PtrType.HOST);
                Memory data = new Memory(8);
                data.setLong(0, buf);
                Memory sizes = new Memory(4);
                sizes.setInt(0, 16);
                Memory tags = new Memory(4);
                tags.setInt(0, 0);
                Memory mh = new Memory(8);
                mh.setLong(0, reg.mhandle);
                Memory out = new Memory(8);
                for (int i = 0; i < 16; i++) {
                    assertThat(p.irecv(c.pointer, address(data), address(sizes), address(tags), address(mh),
                            address(out))).isZero();
                    assertThat(out.getLong(0)).isNotZero();
                }
                assertThat(p.irecv(c.pointer, address(data), address(sizes), address(tags), address(mh),
                        address(out))).isEqualTo(NcclResult.INTERNAL_ERROR);
            } finally {
                NativeMemory.free(buf);
            }
        } finally {
            t.close();
        }
    }

    private static long address(Memory m) {
        return com.sun.jna.Pointer.nativeValue(m);
    }

    /**
     * TCPX's accept says "not yet" (success, null comm) while no peer has connected, before it looks at
     * the device handle; once a peer is there it writes the handle through the buffer it was given, so
     * a null buffer is the caller's fault (TCPX would crash; the peer counts it as misuse and fails).
     */
    @Test
    void v7AcceptSaysNotYetBeforeLookingAtTheDeviceHandleAndFailsOnANullBufferOnceAPeerIsThere() {
        TestPeers.requireTestPeer("misuse count (TCPX itself would crash here)");
        NetPlugin p = NetPlugin.open(TestPeers.path("v7"));
        TcpxTransport t = TestPeers.transport("v7");
        try {
            TcpxListener l = (TcpxListener) t.listen(0);
            Memory out = new Memory(8);
            Memory nullSlot = new Memory(8);
            nullSlot.setLong(0, 0);
            out.setLong(0, -1);
            assertThat(p.accept(l.pointer, out, nullSlot)).as("no peer yet").isEqualTo(NcclResult.SUCCESS);
            assertThat(out.getLong(0)).as("no comm yet").isZero();
            byte[] h = l.handle();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (t.connect(0, h) == null) {
                assertThat(System.nanoTime()).as("connected in time").isLessThan(deadline);
                Thread.onSpinWait();
            }
            long before = misuse();
            int rc;
            do {
                rc = p.accept(l.pointer, out, nullSlot);
                assertThat(System.nanoTime()).as("the peer's greeting arrived in time").isLessThan(deadline);
            } while (rc == NcclResult.SUCCESS && out.getLong(0) == 0);
            assertThat(rc).as("a connected peer and a null device-handle buffer").isEqualTo(NcclResult.INTERNAL_ERROR);
            assertThat(misuse() - before).isEqualTo(1);
        } finally {
            t.close();
        }
    }

    /** The peer's mode: a small send moves at its first test, and reports done at the test the mode says. */
    @Test
    void aSendIsReportedDoneAtTheTestTheTestPeersModeSays() {
        TestPeers.requireTestPeer("TCPX4J_TESTPEER_LATE_TESTS mode");
        TcpxTransport t = TestPeers.transport("v7");
        long buf = NativeMemory.allocate(4096, 4096);
        try {
            TestPeers.Pair pair = TestPeers.Pair.connect(t);
            var reg = t.register(pair.send(), buf, 4096, PtrType.HOST);
            var s = t.isend(pair.send(), buf, 16, 0, reg);
            assertThat(s).isNotNull();
            int late = TestPeers.lateTests();
            for (int i = 1; i < late; i++) {
                assertThat(t.test(s)).as("test %d of a send whose 16 bytes went at the first", i).isFalse();
            }
            assertThat(t.test(s)).as("test %d", late).isTrue();
        } finally {
            t.close();
            NativeMemory.free(buf);
        }
    }

    private static long misuse() {
        return TestPeers.extra("v7", "tcpx4j_testpeer_misuse").invokeLong(new Object[0]);
    }
}
