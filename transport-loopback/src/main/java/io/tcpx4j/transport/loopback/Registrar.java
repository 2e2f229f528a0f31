package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;

import java.util.Objects;

/**
 * Memory registrations on comms: the range and type checks TCPX makes (the 4 KiB rule for CUDA memory),
 * the GPU that owns a CUDA registration, and the checks that a request's memory lies in a live
 * registration of its own comm.
 *
 * <p>Thread-safe: it holds only final configuration. The registrations it makes are not (see
 * {@link LoopbackRegistration}).
 */
final class Registrar {

    private final DeviceMemory deviceMemory;
    /** Device memory with devices: CUDA registrations are accepted and get their owning GPU. */
    private final boolean gpu;

    Registrar(DeviceMemory deviceMemory, boolean gpu) {
        this.deviceMemory = deviceMemory;
        this.gpu = gpu;
    }

    LoopbackRegistration register(LoopbackComm c, long address, long size, PtrType type) {
        if (c.closed) {
            throw new TransferException(Code.INVALID_PARAM, "comm is closed");
        }
        Objects.requireNonNull(type, "type");
        if (size < 0 || (address == 0 && size > 0)) {
            throw new TransferException(Code.INVALID_PARAM, "bad range 0x" + Long.toHexString(address) + "+" + size);
        }
        switch (type) {
            case HOST:
                break;
            case CUDA:
                if (!gpu) {
                    throw new TransferException(Code.NOT_SUPPORTED, "CUDA memory needs a DeviceMemory with devices"
                            + " (the cuda-unpack module on a GPU host)");
                }
                // TCPX registers CUDA memory as a dma-buf, which works on whole 4 KiB pages only
                if (size == 0 || address % NetTransport.CUDA_ALIGNMENT != 0
                        || size % NetTransport.CUDA_ALIGNMENT != 0) {
                    throw new TransferException(Code.INVALID_PARAM, "CUDA registrations must be 4 KiB aligned in"
                            + " start and size: 0x" + Long.toHexString(address) + "+" + size);
                }
                break;
            default:
                throw new TransferException(Code.NOT_SUPPORTED, type + " registrations are not supported");
        }
        return new LoopbackRegistration(c, address, size, type, deviceOf(address, size, type));
    }

    /**
     * The GPU that owns a CUDA registration, so that its staging copies run there (each process may
     * see several GPUs); once per registration, not per send.
     */
    private int deviceOf(long address, long size, PtrType type) {
        if (!gpu || type != PtrType.CUDA) {
            return 0;
        }
        MemoryDescriptor range = deviceMemory.allocationRange(address, size);
        return range.kind() == MemoryKind.VRAM ? range.device() : 0;
    }

    static void deregister(LoopbackComm c, MemoryRegistration registration) {
        LoopbackRegistration r = registration(c, registration);
        r.valid = false;
    }

    /** The live registration of {@code c} that holds {@code [address, address + size)}. */
    static LoopbackRegistration covering(LoopbackComm c, MemoryRegistration registration, long address, int size) {
        LoopbackRegistration r = registration(c, registration);
        if (size < 0 || !r.covers(address, size)) {
            throw new TransferException(Code.INVALID_PARAM, "[0x" + Long.toHexString(address) + ", +" + size
                    + ") is outside " + r);
        }
        return r;
    }

    private static LoopbackRegistration registration(LoopbackComm c, MemoryRegistration registration) {
        if (!(registration instanceof LoopbackRegistration r) || r.comm != c) {
            throw new TransferException(Code.INVALID_PARAM,
                    "registration was not made on this comm (registrations are per comm): " + registration);
        }
        if (!r.valid) {
            throw new TransferException(Code.INVALID_PARAM, "registration was deregistered: " + r);
        }
        return r;
    }
}
