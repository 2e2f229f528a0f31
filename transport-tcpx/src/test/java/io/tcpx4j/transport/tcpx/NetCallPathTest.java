package io.tcpx4j.transport.tcpx;

import com.sun.jna.Function;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.PtrType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Both call paths hand the plugin exactly the arguments the transport meant: the test peer records
 * what each isend, irecv, test and irecvConsumed received on this thread ({@code tcpx4j_testpeer_last}).
 * Values are picked so that a swapped, truncated or sign-mangled argument shows.
 */
class NetCallPathTest {

    /** Not 4 KiB, and odd: a size passed as another int argument differs. */
    private static final int SIZE = 4093;
    /** Negative: a tag passed through a wider or unsigned type changes. */
    private static final int SEND_TAG = 0xCAFEF00D;
    private static final int RECV_TAG = -7;

    @Test
    void theTrampolinesAreBuiltAndUsedByDefault() {
        assertThat(NetCallTrampolines.unavailabilityCause()).as("libtcpx4j-netcall.so built by this build").isNull();
        TcpxTransport t = TestPeers.transport("v7");
        try {
            assertThat(t.plugin().callPath()).isEqualTo(NetPlugin.CallPath.TRAMPOLINE);
        } finally {
            t.close();
        }
    }

    @ParameterizedTest
    @EnumSource(NetPlugin.CallPath.class)
    void everyDataPathCallGetsItsArgumentsUnchanged(NetPlugin.CallPath path) {
        TestPeers.requireTestPeer("tcpx4j_testpeer_last()");
        TcpxTransport t = TestPeers.transport("v7", path);
        long src = NativeMemory.allocate(2 * 4096, 4096);
        long dst = NativeMemory.allocate(2 * 4096, 4096);
        try {
            assertThat(t.plugin().callPath()).isEqualTo(path);
            TestPeers.Pair pair = TestPeers.Pair.connect(t);
            TcpxComm.Send s = (TcpxComm.Send) pair.send();
            TcpxComm.Recv r = (TcpxComm.Recv) pair.recv();
            TcpxRegistration sreg = (TcpxRegistration) t.register(s, src, 2 * 4096, PtrType.HOST);
            TcpxRegistration rreg = (TcpxRegistration) t.register(r, dst, 2 * 4096, PtrType.HOST);
            for (int i = 0; i < SIZE; i++) {
                NativeMemory.putByte(src + 8 + i, (byte) (i * 31 + 7));
            }

            TcpxNetRequest send = (TcpxNetRequest) t.isend(s, src + 8, SIZE, SEND_TAG, sreg);
            assertThat(send).isNotNull();
            assertThat(last("isend.comm")).isEqualTo(s.pointer);
            assertThat(last("isend.data")).isEqualTo(src + 8);
            assertThat(last("isend.size")).isEqualTo(SIZE);
            assertThat(last("isend.tag")).isEqualTo(SEND_TAG);
            assertThat(last("isend.mhandle")).isEqualTo(sreg.mhandle);
            assertThat(last("isend.request")).isEqualTo(s.outSlot);
            assertThat(send.pointer).as("the request the plugin wrote").isNotZero();

            TcpxNetRequest recv = (TcpxNetRequest) t.irecv(r, dst + 16, SIZE, RECV_TAG, rreg);
            assertThat(recv).isNotNull();
            assertThat(last("irecv.comm")).isEqualTo(r.pointer);
            assertThat(last("irecv.n")).isEqualTo(1);
            assertThat(last("irecv.data")).isEqualTo(r.recvData);
            assertThat(last("irecv.sizes")).isEqualTo(r.recvSizes);
            assertThat(last("irecv.tags")).isEqualTo(r.recvTags);
            assertThat(last("irecv.mhandles")).isEqualTo(r.recvMhandles);
            assertThat(last("irecv.request")).isEqualTo(r.outSlot);
            assertThat(last("irecv.data0")).isEqualTo(dst + 16);
            assertThat(last("irecv.size0")).isEqualTo(SIZE);
            assertThat(last("irecv.tag0")).isEqualTo(RECV_TAG);
            assertThat(last("irecv.mhandle0")).isEqualTo(rreg.mhandle);

            TestPeers.pump(t, send);
            assertThat(last("test.request")).isEqualTo(send.pointer);
            assertThat(last("test.done")).isEqualTo(s.doneSlot);
            assertThat(last("test.sizes")).isEqualTo(s.testSizeSlot);
            TestPeers.pump(t, recv);
            assertThat(last("test.request")).isEqualTo(recv.pointer);
            assertThat(last("test.done")).isEqualTo(r.doneSlot);
            assertThat(last("test.sizes")).isEqualTo(r.testSizeSlot);

            t.consumed(r, recv);
            assertThat(last("consumed.comm")).isEqualTo(r.pointer);
            assertThat(last("consumed.n")).isEqualTo(1);
            assertThat(last("consumed.request")).isEqualTo(recv.pointer);

            byte[] got = new byte[SIZE];
            NativeMemory.get(dst + 16, got, 0, SIZE);
            for (int i = 0; i < SIZE; i++) {
                assertThat(got[i]).as("byte %d", i).isEqualTo((byte) (i * 31 + 7));
            }
        } finally {
            t.close();
            NativeMemory.free(src);
            NativeMemory.free(dst);
        }
    }

    /** A full pool and the 17th post look the same on both paths: BUSY, no plugin call. */
    @ParameterizedTest
    @EnumSource(NetPlugin.CallPath.class)
    void aPostThePluginRefusesIsBusyOnBothPaths(NetPlugin.CallPath path) {
        TcpxTransport t = TestPeers.transport("v7", path);
        long dst = NativeMemory.allocate(4096, 4096);
        try {
            TestPeers.Pair pair = TestPeers.Pair.connect(t);
            TcpxRegistration reg = (TcpxRegistration) t.register(pair.recv(), dst, 4096, PtrType.HOST);
            NetRequest first = null;
            for (int i = 0; i < 16; i++) {
                NetRequest q = t.irecv(pair.recv(), dst, 64, i, reg);
                assertThat(q).isNotNull();
                first = first == null ? q : first;
            }
            assertThat(t.irecv(pair.recv(), dst, 64, 16, reg)).isNull();
            assertThat(t.test(first)).as("nothing was sent").isFalse();
        } finally {
            t.close();
            NativeMemory.free(dst);
        }
    }

    @Test
    void aPluginWithoutIrecvConsumedIsNotCalledThroughTheTrampoline() {
        TcpxTransport t = TestPeers.transport("v8-nullopt");
        try {
            assertThat(t.plugin().has(NetSlot.IRECV_CONSUMED)).isFalse();
            assertThatThrownBy(() -> t.plugin().irecvConsumed(1, 2))
                    .hasMessageContaining("has no IRECV_CONSUMED");
        } finally {
            t.close();
        }
    }

    private static long last(String what) {
        Function f = TestPeers.extra("v7", "tcpx4j_testpeer_last");
        long v = f.invokeLong(new Object[] {what});
        assertThat(v).as("peer records " + what).isNotEqualTo(Long.MIN_VALUE);
        return v;
    }
}
