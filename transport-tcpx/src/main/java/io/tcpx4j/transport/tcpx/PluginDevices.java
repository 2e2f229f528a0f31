package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.PtrType;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import static io.tcpx4j.api.TransferException.Code.INVALID_PARAM;
import static io.tcpx4j.api.TransferException.Code.NOT_SUPPORTED;

/**
 * The plugin's network devices, read once with {@code devices} and {@code getProperties} (through the
 * properties layout of the plugin's ncclNet version), and the capabilities each gives
 * ({@link DeviceCapabilities}); the transport as a whole declares what every device can do. A plugin
 * with UNPACK devices that take CUDA memory but no irecvConsumed is refused, because its bounce pages
 * could never be handed back.
 *
 * <p>Thread-safe: immutable once constructed.
 */
final class PluginDevices {

    private final List<DeviceProperties> devices;
    private final List<Set<Capability>> perDevice;
    private final Set<Capability> common;

    PluginDevices(NetPlugin plugin) {
        Memory n = new Memory(4);
        n.setInt(0, 0);
        NcclResult.checkControl("devices", plugin.devices(n));
        List<DeviceProperties> list = new ArrayList<>();
        for (int d = 0; d < n.getInt(0); d++) {
            list.add(readProperties(plugin, d));
        }
        this.devices = List.copyOf(list);
        List<Set<Capability>> caps = new ArrayList<>();
        EnumSet<Capability> all = EnumSet.allOf(Capability.class);
        for (DeviceProperties p : devices) {
            boolean unpacksCuda = p.supports(PtrType.CUDA) && p.netDeviceType() == DeviceProperties.NET_DEVICE_UNPACK;
            if (unpacksCuda && !plugin.has(NetSlot.IRECV_CONSUMED)) {
                throw new TransferException(NOT_SUPPORTED, plugin.libraryName() + ": " + plugin.name()
                        + " reports UNPACK devices that take CUDA memory but has no irecvConsumed, so bounce pages"
                        + " could never be handed back; not a usable net plugin");
            }
            Set<Capability> c = DeviceCapabilities.of(p);
            caps.add(c);
            all.retainAll(c);
        }
        this.perDevice = List.copyOf(caps);
        this.common = devices.isEmpty() ? Set.of() : Set.copyOf(all);
    }

    private static DeviceProperties readProperties(NetPlugin plugin, int dev) {
        NetPluginVersion.PropertiesLayout l = plugin.version().properties();
        Memory p = new Memory(l.size);
        p.clear();
        NcclResult.checkControl("getProperties(" + dev + ")", plugin.getProperties(dev, p));
        Pointer name = p.getPointer(l.name);
        Pointer pci = p.getPointer(l.pciPath);
        int bits = p.getInt(l.ptrSupport);
        EnumSet<PtrType> ptr = EnumSet.noneOf(PtrType.class);
        for (PtrType t : PtrType.values()) {
            if ((bits & t.ncclBit()) != 0) {
                ptr.add(t);
            }
        }
        return new DeviceProperties(name == null ? "" : name.getString(0), pci == null ? "" : pci.getString(0),
                p.getLong(l.guid), ptr, p.getInt(l.speed), p.getInt(l.port), p.getFloat(l.latency),
                p.getInt(l.maxComms), p.getInt(l.maxRecvs),
                l.netDeviceType < 0 ? 0 : p.getInt(l.netDeviceType),
                l.netDeviceVersion < 0 ? 0 : p.getInt(l.netDeviceVersion));
    }

    /** What every device can do (nothing when there is no device). */
    Set<Capability> capabilities() {
        return common;
    }

    /** What a device that {@link #check} accepted can do. */
    Set<Capability> capabilities(int device) {
        return perDevice.get(device);
    }

    int count() {
        return devices.size();
    }

    /** The properties of a device that {@link #check} accepted (a comm's device always is). */
    DeviceProperties get(int device) {
        return devices.get(device);
    }

    /** Throws INVALID_PARAM unless the plugin has {@code device}. */
    void check(int device) {
        if (device < 0 || device >= devices.size()) {
            throw new TransferException(INVALID_PARAM, "no network device " + device + " (have " + devices.size() + ")");
        }
    }
}
