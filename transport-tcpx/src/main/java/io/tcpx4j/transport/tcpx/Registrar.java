package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.PtrType;

import java.util.Objects;

import static io.tcpx4j.api.TransferException.Code.INVALID_PARAM;
import static io.tcpx4j.api.TransferException.Code.NOT_SUPPORTED;
import static io.tcpx4j.domain.port.out.NetTransport.CUDA_ALIGNMENT;

/**
 * Memory registrations on comms (regMr and deregMr): the checks TCPX needs before regMr (no dma-buf,
 * CUDA memory only on a device that declares it ({@link DeviceCapabilities}: one with a PCI path),
 * 4 KiB aligned; at most {@code INT_MAX} bytes before ncclNet v8's size_t), the checks that a posted buffer lies in a live
 * registration of its own comm, and the best-effort release of a closing comm's registrations.
 *
 * <p>Thread-safe: it holds only final references. The registrations it makes are not (see
 * {@link TcpxRegistration}): each comm's list is touched by the thread that drives that comm.
 */
final class Registrar {

    private final NetPlugin plugin;
    private final PluginDevices devices;

    Registrar(NetPlugin plugin, PluginDevices devices) {
        this.plugin = plugin;
        this.devices = devices;
    }

    TcpxRegistration register(TcpxComm c, long address, long size, PtrType type) {
        Objects.requireNonNull(type, "type");
        if (type == PtrType.DMABUF) {
            throw new TransferException(NOT_SUPPORTED, "dma-buf registration is not supported (TCPX's slot is null)");
        }
        if (type == PtrType.CUDA && !devices.capabilities(c.device).contains(Capability.CUDA_MEMORY)) {
            // a device without a PCI path never declares CUDA memory: TCPX's regMr takes the NIC's PCI
            // address from that path and crashes without one, so the plugin must not see this call
            DeviceProperties p = devices.get(c.device);
            throw new TransferException(NOT_SUPPORTED, "device " + c.device + " (" + p.name() + ") of " + plugin.name()
                    + " " + DeviceCapabilities.whyNoCudaMemory(p));
        }
        if (size < 0) {
            throw new TransferException(INVALID_PARAM, "negative registration size " + size);
        }
        if (type == PtrType.CUDA && (address % CUDA_ALIGNMENT != 0 || size % CUDA_ALIGNMENT != 0)) {
            throw new TransferException(INVALID_PARAM, "CUDA registrations must be 4 KiB aligned in start and size"
                    + " (TCPX's dma-buf path): 0x" + Long.toHexString(address) + "+" + size);
        }
        if (!plugin.version().regMrSizeT() && size > Integer.MAX_VALUE) {
            throw new TransferException(INVALID_PARAM, "ncclNet v" + plugin.version().number()
                    + " registers at most " + Integer.MAX_VALUE + " bytes at once; got " + size);
        }
        NativeMemory.putLong(c.outSlot, 0);
        NcclResult.checkControl("regMr", plugin.regMr(c.pointer, address, size, type.ncclBit(), c.outSlot));
        TcpxRegistration r = new TcpxRegistration(c, NativeMemory.getLong(c.outSlot), address, size, type);
        c.registrations.add(r);
        return r;
    }

    void deregister(TcpxComm c, MemoryRegistration registration) {
        TcpxRegistration r = registrationOf(c, registration);
        r.released = true;
        c.registrations.remove(r);
        NcclResult.checkControl("deregMr", plugin.deregMr(c.pointer, r.mhandle));
    }

    /** The live registration of {@code c} that holds {@code [address, address + size)}. */
    static TcpxRegistration covering(TcpxComm c, long address, int size, MemoryRegistration registration) {
        TcpxRegistration r = registrationOf(c, registration);
        if (size < 0 || !r.covers(address, size)) {
            throw new TransferException(INVALID_PARAM, "buffer 0x" + Long.toHexString(address) + "+" + size
                    + " outside its registration " + r);
        }
        return r;
    }

    /** Deregisters every registration of a closing comm, ignoring failures: the comm goes anyway. */
    void releaseAll(TcpxComm c) {
        for (TcpxRegistration r : c.registrations) {
            r.released = true;
            plugin.deregMr(c.pointer, r.mhandle); // best effort: the comm goes anyway
        }
        c.registrations.clear();
    }

    private static TcpxRegistration registrationOf(TcpxComm c, MemoryRegistration registration) {
        if (!(registration instanceof TcpxRegistration r) || r.comm != c) {
            throw new TransferException(INVALID_PARAM, "registration " + registration + " is not one of " + c
                    + " (TCPX registrations are per comm)");
        }
        if (r.released) {
            throw new TransferException(INVALID_PARAM, "registration " + r + " was deregistered");
        }
        return r;
    }
}
