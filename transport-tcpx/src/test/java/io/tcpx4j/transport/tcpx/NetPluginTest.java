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

    @Test
    void v7AcceptWithoutADeviceHandleBufferFailsLikeTcpx() {
        NetPlugin p = NetPlugin.open(TestPeers.path("v7"));
        TcpxTransport t = TestPeers.transport("v7");
        try {
            TcpxListener l = (TcpxListener) t.listen(0);
            Memory out = new Memory(8);
            Memory nullSlot = new Memory(8);
            nullSlot.setLong(0, 0);
            assertThat(p.accept(l.pointer, out, nullSlot)).isEqualTo(NcclResult.INTERNAL_ERROR);
        } finally {
            t.close();
        }
    }
}
