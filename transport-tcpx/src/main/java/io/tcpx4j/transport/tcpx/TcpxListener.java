package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.tcpx4j.domain.port.out.Listener;

/**
 * A plugin listenComm and its one accept. A listener yields exactly one comm: TCPX frees its accept
 * state when accept succeeds but keeps the pointer, so a second accept on the listen comm frees it
 * again (the process aborts with a double free). {@link TcpxTransport#accept} therefore never calls
 * the plugin again once {@link #yielded}.
 *
 * <p>Guarded by its own monitor for the fields below; the monitor is never held across a plugin call.
 */
final class TcpxListener implements Listener {

    final TcpxTransport owner;
    final int device;
    final long pointer;
    private final byte[] handle;
    /** ncclNetDeviceHandle** for accept: holds the address of {@link #deviceHandle}. */
    final Memory deviceHandleSlot = new Memory(8);
    /**
     * Backing of the zeroed device-handle buffer (32 bytes inside, 16-byte aligned) that TCPX's
     * accept writes through the pointer we pass, unconditionally; it moves to the accepted comm.
     */
    final Memory deviceHandleBacking;
    final Pointer deviceHandle;
    /** The accept running on a set-up thread, or null before the first accept. */
    SetupCall accept;
    boolean yielded;
    boolean closed;

    TcpxListener(TcpxTransport owner, int device, long pointer, byte[] handle) {
        this.owner = owner;
        this.device = device;
        this.pointer = pointer;
        this.handle = handle.clone();
        deviceHandleBacking = new Memory(NativeLayouts.DeviceHandle.BYTES + NativeLayouts.DeviceHandle.ALIGNMENT);
        deviceHandleBacking.clear();
        deviceHandle = deviceHandleBacking.align(NativeLayouts.DeviceHandle.ALIGNMENT);
        deviceHandleSlot.setPointer(0, deviceHandle);
    }

    @Override
    public byte[] handle() {
        return handle.clone();
    }

    @Override
    public String toString() {
        return "tcpx listener 0x" + Long.toHexString(pointer);
    }
}
