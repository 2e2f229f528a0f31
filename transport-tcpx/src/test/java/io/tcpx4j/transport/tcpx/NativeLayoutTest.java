package io.tcpx4j.transport.tcpx;

import com.sun.jna.Function;
import com.sun.jna.Pointer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.tcpx4j.transport.tcpx.NetSlot.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every offset and size the binding relies on, asserted as a number (so a wrong constant fails) and
 * against what gcc computes for the test peer's own declarations of the same ABI structs.
 */
class NativeLayoutTest {

    private static long c(String what) {
        Function f = TestPeers.extra("v7", "tcpx4j_testpeer_layout");
        long v = f.invokeLong(new Object[] {what});
        assertThat(v).as(what + " known to the test peer").isNotNegative();
        return v;
    }

    @Test
    void deviceHandleIs32BytesWithTheHandlePointerAt8() {
        assertThat(NativeLayouts.DeviceHandle.TYPE).isEqualTo(0).isEqualTo((int) c("device_handle.type"));
        assertThat(NativeLayouts.DeviceHandle.VERSION).isEqualTo(4).isEqualTo((int) c("device_handle.version"));
        assertThat(NativeLayouts.DeviceHandle.HANDLE).isEqualTo(8).isEqualTo((int) c("device_handle.handle"));
        assertThat(NativeLayouts.DeviceHandle.SIZE_FIELD).isEqualTo(16).isEqualTo((int) c("device_handle.bytes"));
        assertThat(NativeLayouts.DeviceHandle.NEEDS_PROXY_PROGRESS).isEqualTo(24)
                .isEqualTo((int) c("device_handle.needs_proxy"));
        assertThat(NativeLayouts.DeviceHandle.BYTES).isEqualTo(32).isEqualTo((int) c("device_handle.size"));
    }

    @Test
    void unpackHandleIsMetaBounceHead() {
        assertThat(NativeLayouts.UnpackHandle.META).isEqualTo(0).isEqualTo((int) c("unpack_handle.meta"));
        assertThat(NativeLayouts.UnpackHandle.BOUNCE_BUF).isEqualTo(8).isEqualTo((int) c("unpack_handle.bounce"));
        assertThat(NativeLayouts.UnpackHandle.HEAD).isEqualTo(16).isEqualTo((int) c("unpack_handle.head"));
        assertThat(NativeLayouts.UnpackHandle.BYTES).isEqualTo(24).isEqualTo((int) c("unpack_handle.size"));
    }

    @Test
    void fragmentIs16Bytes() {
        assertThat(NativeLayouts.Fragment.SRC_OFF).isEqualTo(0).isEqualTo((int) c("fragment.src_off"));
        assertThat(NativeLayouts.Fragment.LEN).isEqualTo(4).isEqualTo((int) c("fragment.len"));
        assertThat(NativeLayouts.Fragment.DST_OFF).isEqualTo(8).isEqualTo((int) c("fragment.dst_off"));
        assertThat(NativeLayouts.Fragment.BYTES).isEqualTo(16).isEqualTo((int) c("fragment.size"))
                .isEqualTo(io.tcpx4j.domain.port.out.NetRequest.FRAGMENT_BYTES);
        assertThat(NativeLayouts.Fragment.MAX_PER_RECEIVE).isEqualTo(2048)
                .isEqualTo(io.tcpx4j.domain.port.out.NetRequest.MAX_FRAGMENTS);
    }

    @Test
    void requestUnpackSlotAtThe2024Offsets() {
        TcpxRequestLayout l = TcpxRequestLayout.X86_64_2024;
        assertThat(l.unpackSlot).isEqualTo(56).isEqualTo((int) c("request.unpack"));
        assertThat(l.fragments).isEqualTo(72).isEqualTo((int) c("request.unpack.frags"));
        assertThat(l.count).isEqualTo(80).isEqualTo((int) c("request.unpack.count"));
    }

    @Test
    void propertiesLayoutsPerVersion() {
        NetPluginVersion.PropertiesLayout v6 = NetPluginVersion.PropertiesLayout.V6;
        assertThat(v6.size).isEqualTo(48).isEqualTo((int) c("props_v6.size"));
        assertThat(v6.guid).isEqualTo(16).isEqualTo((int) c("props_v6.guid"));
        assertThat(v6.ptrSupport).isEqualTo(24).isEqualTo((int) c("props_v6.ptr_support"));
        assertThat(v6.speed).isEqualTo(28).isEqualTo((int) c("props_v6.speed"));
        assertThat(v6.latency).isEqualTo(36).isEqualTo((int) c("props_v6.latency"));
        assertThat(v6.maxRecvs).isEqualTo(44).isEqualTo((int) c("props_v6.max_recvs"));
        NetPluginVersion.PropertiesLayout v7 = NetPluginVersion.PropertiesLayout.V7;
        assertThat(v7.size).isEqualTo(56).isEqualTo((int) c("props_v7.size"));
        assertThat(v7.netDeviceType).isEqualTo(48).isEqualTo((int) c("props_v7.device_type"));
        assertThat(v7.netDeviceVersion).isEqualTo(52).isEqualTo((int) c("props_v7.device_version"));
        NetPluginVersion.PropertiesLayout v8 = NetPluginVersion.PropertiesLayout.V8;
        assertThat(v8.size).isEqualTo(64).isEqualTo((int) c("props_v8.size"));
        assertThat(v8.regIsGlobal).isEqualTo(28).isEqualTo((int) c("props_v8.reg_is_global"));
        assertThat(v8.speed).isEqualTo(32).isEqualTo((int) c("props_v8.speed"));
        assertThat(v8.latency).isEqualTo(40).isEqualTo((int) c("props_v8.latency"));
        assertThat(v8.maxRecvs).isEqualTo(48).isEqualTo((int) c("props_v8.max_recvs"));
        assertThat(v8.netDeviceType).isEqualTo(52).isEqualTo((int) c("props_v8.device_type"));
        assertThat(v8.netDeviceVersion).isEqualTo(56).isEqualTo((int) c("props_v8.device_version"));
        assertThat(NetPluginVersion.V5.properties()).isSameAs(v6);
    }

    @Test
    void tableOrderOfEveryVersion() {
        List<NetSlot> v7 = List.of(NAME, INIT, DEVICES, GET_PROPERTIES, LISTEN, CONNECT, ACCEPT, REG_MR,
                REG_MR_DMA_BUF, DEREG_MR, ISEND, IRECV, IFLUSH, TEST, CLOSE_SEND, CLOSE_RECV, CLOSE_LISTEN,
                GET_DEVICE_MR, IRECV_CONSUMED);
        assertThat(NetPluginVersion.V7.order()).containsExactlyElementsOf(v7);
        assertThat(NetPluginVersion.V8.order()).containsExactlyElementsOf(v7);
        assertThat(NetPluginVersion.V6.order()).containsExactlyElementsOf(v7.subList(0, 17));
        assertThat(NetPluginVersion.V5.order()).doesNotContain(REG_MR_DMA_BUF).hasSize(16);
        assertThat(NetPluginVersion.V7.offset(REG_MR_DMA_BUF)).isEqualTo(64);
        assertThat(NetPluginVersion.V7.offset(ISEND)).isEqualTo(80);
        assertThat(NetPluginVersion.V7.offset(TEST)).isEqualTo(104);
        assertThat(NetPluginVersion.V7.offset(IRECV_CONSUMED)).isEqualTo(144);
        assertThat(NetPluginVersion.V7.tableBytes()).isEqualTo(152);
        assertThat(NetPluginVersion.V5.offset(DEREG_MR)).isEqualTo(64);
        assertThat(NetPluginVersion.V5.offset(CLOSE_LISTEN)).isEqualTo(120);
        assertThat(NetPluginVersion.V8.regMrSizeT()).isTrue();
        assertThat(NetPluginVersion.V7.regMrSizeT()).isFalse();
        assertThat(NetPluginVersion.V7.deviceHandles()).isTrue();
        assertThat(NetPluginVersion.V6.deviceHandles()).isFalse();
    }

    @Test
    void nativeTablesHaveTheirNullSlotExactlyWhereTheLayoutSays() {
        for (String v : List.of("v5", "v6", "v7", "v8")) {
            NetPlugin p = NetPlugin.open(TestPeers.path(v));
            NetPluginVersion ver = p.version();
            assertThat(p.name()).isEqualTo("tcpx4j-testpeer-" + v);
            for (NetSlot s : ver.order()) {
                Pointer fp = p.table().getPointer(ver.offset(s));
                // TCPX (and the peer) leave only regMrDmaBuf null
                assertThat(fp == null).as(v + " " + s + " null").isEqualTo(s == REG_MR_DMA_BUF);
            }
        }
    }
}
