package io.tcpx4j.domain.port.out;

import java.util.Objects;
import java.util.Set;

/**
 * A network device as the transport describes it (ncclNetProperties).
 *
 * @param name             interface name, e.g. {@code eth1}
 * @param pciPath          sysfs PCI path of the NIC, or empty
 * @param guid             device GUID
 * @param ptrSupport       memory the device sends from and receives into
 * @param speedMbps        link speed
 * @param port             port number
 * @param latencyUs        reported latency in microseconds
 * @param maxComms         most comms the device supports
 * @param maxRecvs         most buffers one irecv may take (TCPX: 1)
 * @param netDeviceType    0 = host, 1 = UNPACK (receives into CUDA memory land in bounce pages)
 * @param netDeviceVersion device-handle version (TCPX: 7)
 */
public record DeviceProperties(String name, String pciPath, long guid, Set<PtrType> ptrSupport, int speedMbps,
                               int port, float latencyUs, int maxComms, int maxRecvs, int netDeviceType,
                               int netDeviceVersion) {

    /** {@code netDeviceType} of a device whose CUDA receives must be unpacked from bounce pages. */
    public static final int NET_DEVICE_UNPACK = 1;

    public DeviceProperties {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(pciPath, "pciPath");
        ptrSupport = Set.copyOf(ptrSupport);
    }

    public boolean supports(PtrType type) {
        return ptrSupport.contains(type);
    }
}
