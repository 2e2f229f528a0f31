package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.DeviceMemory;

/**
 * Reads the device handle that accept fills for a receive comm: whether the comm is an UNPACK comm
 * (its receives into CUDA memory land in bounce pages), and where its bounce buffer lives — base,
 * bytes and memory kind, from the 24-byte unpack handle in device memory, copied to the host through
 * the injected {@link DeviceMemory} once per comm.
 *
 * <p>Thread-safe: it holds only final references. {@link #readBounceBase} writes the comm's bounce
 * fields, so it runs on the thread that drives that comm.
 */
final class UnpackHandles {

    private final NetPlugin plugin;
    private final DeviceMemory deviceMemory;

    UnpackHandles(NetPlugin plugin, DeviceMemory deviceMemory) {
        this.plugin = plugin;
        this.deviceMemory = deviceMemory;
    }

    /**
     * Whether an accepted comm's receives into CUDA memory land in bounce pages: the plugin's ABI has
     * device handles, it has irecvConsumed to hand pages back, and accept wrote an UNPACK handle.
     */
    static boolean unpack(NetPlugin plugin, Pointer deviceHandle) {
        return plugin.version().deviceHandles() && plugin.has(NetSlot.IRECV_CONSUMED)
                && deviceHandle.getInt(NativeLayouts.DeviceHandle.TYPE) == NativeLayouts.DeviceHandle.TYPE_UNPACK;
    }

    /**
     * The device handle's {@code handle} points at the 24-byte unpack handle in device memory; its
     * {@code bounce_buf} is the base every fragment's src_off is relative to. One device-to-host copy
     * per receive comm, at its first receive into CUDA memory: a comm that only ever receives host
     * memory never needs it.
     */
    void readBounceBase(TcpxComm.Recv c) {
        Pointer dh = c.deviceHandle;
        int version = dh.getInt(NativeLayouts.DeviceHandle.VERSION);
        long handle = Pointer.nativeValue(dh.getPointer(NativeLayouts.DeviceHandle.HANDLE));
        long size = dh.getLong(NativeLayouts.DeviceHandle.SIZE_FIELD);
        if (version != NativeLayouts.DeviceHandle.UNPACK_VERSION || handle == 0
                || size < NativeLayouts.UnpackHandle.BYTES) {
            throw new TransferException(TransferException.Code.BACKEND, "unexpected UNPACK device handle from "
                    + plugin.name() + ": version " + version + ", handle 0x" + Long.toHexString(handle) + ", size " + size
                    + " (this binding reads version " + NativeLayouts.DeviceHandle.UNPACK_VERSION + ")");
        }
        Memory host = new Memory(NativeLayouts.UnpackHandle.BYTES);
        MemoryDescriptor where = deviceMemory.allocationRange(handle, NativeLayouts.UnpackHandle.BYTES);
        deviceMemory.copy(MemoryDescriptor.dram(Pointer.nativeValue(host), NativeLayouts.UnpackHandle.BYTES),
                new MemoryDescriptor(handle, NativeLayouts.UnpackHandle.BYTES, where.kind(), where.device()));
        long base = host.getLong(NativeLayouts.UnpackHandle.BOUNCE_BUF);
        if (base == 0) {
            throw new TransferException(TransferException.Code.BACKEND,
                    plugin.name() + " gave a receive comm without a bounce buffer, so it cannot receive into CUDA memory");
        }
        c.bounceKind = deviceMemory.kindOf(base);
        if (c.bounceKind == MemoryKind.VRAM) {
            MemoryDescriptor area = deviceMemory.allocationRange(base, 1);
            c.bounceBytes = area.address() + area.length() - base;
        } else {
            c.bounceBytes = Long.MAX_VALUE;
        }
        c.bounceBase = base;
    }
}
