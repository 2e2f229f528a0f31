package io.tcpx4j.transport.tcpx;

import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.PtrType;

import java.util.EnumSet;
import java.util.Set;

/**
 * The capabilities one network device of a net plugin gives, from its properties alone:
 * <ul>
 *   <li>CUDA_MEMORY when the device takes NCCL_PTR_CUDA and has a PCI path: TCPX registers CUDA memory
 *       through the NIC's PCI address, which it cuts out of that path, so a device without one (a
 *       virtual interface such as {@code lo}) cannot take CUDA memory whatever its pointer support
 *       says;</li>
 *   <li>DEVMEM_RECEIVE when the device takes CUDA memory and is an UNPACK device: only receives into
 *       CUDA memory land in bounce pages (TCPX built host-only still reports UNPACK).</li>
 * </ul>
 */
final class DeviceCapabilities {

    private DeviceCapabilities() {
    }

    static Set<Capability> of(DeviceProperties device) {
        EnumSet<Capability> caps = EnumSet.noneOf(Capability.class);
        if (device.supports(PtrType.CUDA) && !device.pciPath().isEmpty()) {
            caps.add(Capability.CUDA_MEMORY);
            if (device.netDeviceType() == DeviceProperties.NET_DEVICE_UNPACK) {
                caps.add(Capability.DEVMEM_RECEIVE);
            }
        }
        return Set.copyOf(caps);
    }

    /** Why {@code device} does not take CUDA memory; only for a device without CUDA_MEMORY. */
    static String whyNoCudaMemory(DeviceProperties device) {
        if (!device.supports(PtrType.CUDA)) {
            return "does not take CUDA memory (its pointer support is " + device.ptrSupport() + ")";
        }
        return "has no PCI path, and CUDA memory is registered through the NIC's PCI address;"
                + " use a NIC that is a PCI device for GPU memory";
    }
}
