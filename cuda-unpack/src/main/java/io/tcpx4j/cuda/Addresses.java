package io.tcpx4j.cuda;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * Bridges raw 64-bit addresses (what the engine, TCPX and NIXL speak) and JCuda's pointer objects.
 * JCuda keeps a pointer's value in protected fields; these subclasses read them, and
 * {@link #device(long)} builds a pointer to any address through JCuda's public byte-offset API.
 *
 * <p>Thread-safe (stateless).
 */
final class Addresses {

    private static final CUdeviceptr NULL = new CUdeviceptr();

    private Addresses() {
    }

    /** A JCuda device pointer whose value is {@code address} (one small object). */
    static CUdeviceptr device(long address) {
        return NULL.withByteOffset(address);
    }

    /** A device pointer a driver call fills in (cuMemAlloc, cuMemGetAddressRange, ...). */
    static final class DevicePointer extends CUdeviceptr {
        long address() {
            return getNativePointer() + getByteOffset();
        }
    }

    /** A host pointer a driver call fills in (cuMemHostAlloc). */
    static final class HostPointer extends Pointer {
        long address() {
            return getNativePointer() + getByteOffset();
        }
    }
}
