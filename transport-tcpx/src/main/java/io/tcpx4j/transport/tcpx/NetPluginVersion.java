package io.tcpx4j.transport.tcpx;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static io.tcpx4j.transport.tcpx.NetSlot.*;

/**
 * The ncclNet ABI versions this binding speaks, in the order they are probed (newest first, as NCCL
 * does), with each version's table order and ncclNetProperties layout (x86-64 / LP64).
 *
 * <p>Upstream facts (NVIDIA/nccl ext-net headers net_v5.h .. net_v8.h):
 * <ul>
 *   <li>v5: no regMrDmaBuf slot; connect(dev, handle, sendComm**), accept(listen, recvComm**);
 *       properties as v6.</li>
 *   <li>v6: adds regMrDmaBuf right after regMr.</li>
 *   <li>v7: connect and accept take a device-handle pointer-to-pointer; getDeviceMr and
 *       irecvConsumed appended; properties gain netDeviceType and netDeviceVersion.</li>
 *   <li>v8: regMr's size becomes size_t; properties gain regIsGlobal after ptrSupport.</li>
 * </ul>
 * TCPX (google/nccl-plugin-gpudirecttcpx, 2024) exports {@code ncclNetPlugin_v7}.
 */
enum NetPluginVersion {
    V8(8, true, true, PropertiesLayout.V8, List.of(NAME, INIT, DEVICES, GET_PROPERTIES, LISTEN, CONNECT, ACCEPT,
            REG_MR, REG_MR_DMA_BUF, DEREG_MR, ISEND, IRECV, IFLUSH, TEST, CLOSE_SEND, CLOSE_RECV, CLOSE_LISTEN,
            GET_DEVICE_MR, IRECV_CONSUMED)),
    V7(7, false, true, PropertiesLayout.V7, List.of(NAME, INIT, DEVICES, GET_PROPERTIES, LISTEN, CONNECT, ACCEPT,
            REG_MR, REG_MR_DMA_BUF, DEREG_MR, ISEND, IRECV, IFLUSH, TEST, CLOSE_SEND, CLOSE_RECV, CLOSE_LISTEN,
            GET_DEVICE_MR, IRECV_CONSUMED)),
    V6(6, false, false, PropertiesLayout.V6, List.of(NAME, INIT, DEVICES, GET_PROPERTIES, LISTEN, CONNECT, ACCEPT,
            REG_MR, REG_MR_DMA_BUF, DEREG_MR, ISEND, IRECV, IFLUSH, TEST, CLOSE_SEND, CLOSE_RECV, CLOSE_LISTEN)),
    V5(5, false, false, PropertiesLayout.V6, List.of(NAME, INIT, DEVICES, GET_PROPERTIES, LISTEN, CONNECT, ACCEPT,
            REG_MR, DEREG_MR, ISEND, IRECV, IFLUSH, TEST, CLOSE_SEND, CLOSE_RECV, CLOSE_LISTEN));

    private final int number;
    private final boolean regMrSizeT;
    private final boolean deviceHandles;
    private final PropertiesLayout properties;
    private final List<NetSlot> order;
    private final Map<NetSlot, Integer> index = new EnumMap<>(NetSlot.class);

    NetPluginVersion(int number, boolean regMrSizeT, boolean deviceHandles, PropertiesLayout properties,
                     List<NetSlot> order) {
        this.number = number;
        this.regMrSizeT = regMrSizeT;
        this.deviceHandles = deviceHandles;
        this.properties = properties;
        this.order = order;
        for (int i = 0; i < order.size(); i++) {
            index.put(order.get(i), i);
        }
    }

    int number() {
        return number;
    }

    /** The exported data symbol that holds this version's table. */
    String symbol() {
        return "ncclNetPlugin_v" + number;
    }

    /** regMr takes {@code size_t} (v8) instead of {@code int} (v5-v7). */
    boolean regMrSizeT() {
        return regMrSizeT;
    }

    /** connect/accept take device-handle arguments, and getDeviceMr/irecvConsumed exist (v7+). */
    boolean deviceHandles() {
        return deviceHandles;
    }

    PropertiesLayout properties() {
        return properties;
    }

    /** The table's members in declaration order. */
    List<NetSlot> order() {
        return order;
    }

    boolean has(NetSlot slot) {
        return index.containsKey(slot);
    }

    /** Byte offset of a member inside the table (every member is pointer-sized). */
    long offset(NetSlot slot) {
        Integer i = index.get(slot);
        if (i == null) {
            throw new IllegalArgumentException(this + " has no " + slot);
        }
        return (long) i * Long.BYTES;
    }

    /** Table size in bytes. */
    long tableBytes() {
        return (long) order.size() * Long.BYTES;
    }

    /**
     * ncclNetProperties layouts. Offsets are those a C compiler gives the upstream declarations on
     * LP64: two pointers, a uint64 guid, then 4-byte ints and a float; v8 inserts regIsGlobal after
     * ptrSupport; structs end padded to 8 bytes.
     */
    enum PropertiesLayout {
        V6(48, 0, 8, 16, 24, -1, 28, 32, 36, 40, 44, -1, -1),
        V7(56, 0, 8, 16, 24, -1, 28, 32, 36, 40, 44, 48, 52),
        V8(64, 0, 8, 16, 24, 28, 32, 36, 40, 44, 48, 52, 56);

        final int size;
        final int name;
        final int pciPath;
        final int guid;
        final int ptrSupport;
        final int regIsGlobal;
        final int speed;
        final int port;
        final int latency;
        final int maxComms;
        final int maxRecvs;
        final int netDeviceType;
        final int netDeviceVersion;

        PropertiesLayout(int size, int name, int pciPath, int guid, int ptrSupport, int regIsGlobal, int speed,
                         int port, int latency, int maxComms, int maxRecvs, int netDeviceType, int netDeviceVersion) {
            this.size = size;
            this.name = name;
            this.pciPath = pciPath;
            this.guid = guid;
            this.ptrSupport = ptrSupport;
            this.regIsGlobal = regIsGlobal;
            this.speed = speed;
            this.port = port;
            this.latency = latency;
            this.maxComms = maxComms;
            this.maxRecvs = maxRecvs;
            this.netDeviceType = netDeviceType;
            this.netDeviceVersion = netDeviceVersion;
        }
    }
}
