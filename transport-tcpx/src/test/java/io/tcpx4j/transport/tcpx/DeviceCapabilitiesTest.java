package io.tcpx4j.transport.tcpx;

import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.PtrType;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** What one device's properties give, without a plugin or a device: capabilities are per device. */
class DeviceCapabilitiesTest {

    private static DeviceProperties device(String pciPath, Set<PtrType> ptr, int type) {
        return new DeviceProperties("eth1", pciPath, 1, ptr, 200_000, 1, 0, 65536, 1, type, type == 1 ? 7 : 0);
    }

    @Test
    void aDeviceWithoutAPciPathDeclaresNoCudaMemoryThoughItsPointerSupportNamesIt() {
        DeviceProperties lo = device("", Set.of(PtrType.HOST, PtrType.CUDA), DeviceProperties.NET_DEVICE_UNPACK);
        assertThat(DeviceCapabilities.of(lo)).isEmpty();
        assertThat(DeviceCapabilities.whyNoCudaMemory(lo)).contains("no PCI path");
    }

    @Test
    void aPciDeviceThatTakesCudaDeclaresItAndUnpackDevicesDeclareDevmemReceives() {
        String pci = "/sys/devices/pci0000:00/0000:00:03.0/0000:06:00.0";
        assertThat(DeviceCapabilities.of(device(pci, Set.of(PtrType.HOST, PtrType.CUDA), DeviceProperties.NET_DEVICE_UNPACK)))
                .containsExactlyInAnyOrder(Capability.CUDA_MEMORY, Capability.DEVMEM_RECEIVE);
        assertThat(DeviceCapabilities.of(device(pci, Set.of(PtrType.HOST, PtrType.CUDA), 0)))
                .containsExactly(Capability.CUDA_MEMORY);
    }

    @Test
    void aHostOnlyDeviceDeclaresNothingEvenAsAnUnpackDevice() {
        String pci = "/sys/devices/pci0000:00/0000:00:03.0/0000:06:00.0";
        DeviceProperties host = device(pci, Set.of(PtrType.HOST), DeviceProperties.NET_DEVICE_UNPACK);
        assertThat(DeviceCapabilities.of(host)).isEmpty();
        assertThat(DeviceCapabilities.whyNoCudaMemory(host)).contains("does not take CUDA memory");
    }
}
