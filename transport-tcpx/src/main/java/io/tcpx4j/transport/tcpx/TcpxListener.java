package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.tcpx4j.domain.port.out.Listener;

/**
 * A plugin listenComm, with the native state accept needs between retries. <b>Not thread-safe</b>
 * beyond what {@link TcpxTransport#accept} synchronizes.
 */
final class TcpxListener implements Listener {

    final TcpxTransport owner;
    final long pointer;
    private final byte[] handle;
    final Memory out = new Memory(8);
    /** ncclNetDeviceHandle** for accept: holds the address of {@link #deviceHandle}. */
    final Memory deviceHandleSlot = new Memory(8);
    /** Backing of the current zeroed device-handle buffer (32 bytes inside, 16-byte aligned). */
    Memory deviceHandleBacking;
    Pointer deviceHandle;
    boolean closed;

    TcpxListener(TcpxTransport owner, long pointer, byte[] handle) {
        this.owner = owner;
        this.pointer = pointer;
        this.handle = handle.clone();
        freshDeviceHandle();
    }

    /**
     * TCPX's accept writes the device handle through the pointer we pass, unconditionally: give it a
     * zeroed, 16-byte aligned buffer of at least 32 bytes, a new one for every accepted comm.
     */
    void freshDeviceHandle() {
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
