package io.tcpx4j.transport.tcpx;

/**
 * Fixed C layouts of the NCCL device-networking ABI (LP64). Upstream facts: NVIDIA/nccl
 * ext-net/example/nccl/net_device.h ({@code ncclNetDeviceHandle_v7_t}) and
 * src/device/network/unpack/unpack_defs.h ({@code unpackNetDeviceHandle}, {@code loadMeta},
 * {@code NET_UNPACK_MAX_SLICE_PAGES} = 2048).
 */
final class NativeLayouts {

    private NativeLayouts() {
    }

    /** ncclNetDeviceHandle_v7_t: {int netDeviceType; int netDeviceVersion; void* handle; size_t size; int needsProxyProgress}. */
    static final class DeviceHandle {
        static final int TYPE = 0;
        static final int VERSION = 4;
        static final int HANDLE = 8;
        static final int SIZE_FIELD = 16;
        static final int NEEDS_PROXY_PROGRESS = 24;
        static final int BYTES = 32;
        /** TCPX writes it with 16-byte stores in places; NCCL hands it aligned memory. */
        static final int ALIGNMENT = 16;
        /** NCCL_NET_DEVICE_UNPACK. */
        static final int TYPE_UNPACK = 1;
        /** NCCL_NET_DEVICE_UNPACK_VERSION. */
        static final int UNPACK_VERSION = 7;

        private DeviceHandle() {
        }
    }

    /** unpackNetDeviceHandle, in device memory: {netUnpackMeta* meta; void* bounce_buf; uint64_t head}. */
    static final class UnpackHandle {
        static final int META = 0;
        static final int BOUNCE_BUF = 8;
        static final int HEAD = 16;
        static final int BYTES = 24;

        private UnpackHandle() {
        }
    }

    /** loadMeta: {u32 src_off; u32 len; u64 dst_off}. */
    static final class Fragment {
        static final int SRC_OFF = 0;
        static final int LEN = 4;
        static final int DST_OFF = 8;
        static final int BYTES = 16;
        /** NET_UNPACK_MAX_SLICE_PAGES: 4 MiB per receive / 4 KiB pages * 2. */
        static final int MAX_PER_RECEIVE = 2048;

        private Fragment() {
        }
    }
}
