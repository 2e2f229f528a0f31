package io.tcpx4j.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * NVIDIA GPUs and network interfaces as sysfs shows them, and which NIC sits nearest to which GPU in
 * the PCIe tree. GPUDirect-TCPX receives straight into GPU memory; a NIC under the same PCIe switch as
 * the GPU keeps that traffic off the CPU's root complex (on A3, each pair of GPUs shares a switch with
 * one data NIC). Read-only and best effort: anything unreadable is skipped.
 *
 * <p>Thread-safe (immutable after {@link #scan}).
 */
final class PciTopology {

    private static final Pattern PCI_ADDRESS = Pattern.compile("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
    static final String NVIDIA = "0x10de";
    /** PCI class 0x0302: 3D controller (data-centre GPUs). */
    static final String CLASS_3D = "0x0302";

    /** A PCI function with the chain of PCI addresses from its root port down to itself. */
    record Device(String name, String address, List<String> chain) {
    }

    /** A GPU and the NIC that shares the most of its PCIe path (null if none shares any bridge). */
    record Pairing(Device gpu, Device nic, int sharedBridges) {
        boolean sameSwitch() {
            return nic != null && sharedBridges > 0;
        }
    }

    private final List<Device> gpus;
    private final List<Device> nics;

    private PciTopology(List<Device> gpus, List<Device> nics) {
        this.gpus = List.copyOf(gpus);
        this.nics = List.copyOf(nics);
    }

    /** Reads {@code sysfs}/bus/pci/devices and {@code sysfs}/class/net. */
    static PciTopology scan(Path sysfs) {
        List<Device> gpus = new ArrayList<>();
        for (Path d : list(sysfs.resolve("bus/pci/devices"))) {
            String vendor = read(d.resolve("vendor"));
            String cls = read(d.resolve("class"));
            if (NVIDIA.equals(vendor) && cls != null && cls.toLowerCase(Locale.ROOT).startsWith(CLASS_3D)) {
                Device g = device(d.getFileName().toString(), d);
                if (g != null) {
                    gpus.add(g);
                }
            }
        }
        List<Device> nics = new ArrayList<>();
        for (Path n : list(sysfs.resolve("class/net"))) {
            Path dev = n.resolve("device");
            if (Files.exists(dev)) {
                Device d = device(n.getFileName().toString(), dev);
                if (d != null) {
                    nics.add(d);
                }
            }
        }
        gpus.sort(java.util.Comparator.comparing(Device::address));
        nics.sort(java.util.Comparator.comparing(Device::name));
        return new PciTopology(gpus, nics);
    }

    List<Device> gpus() {
        return gpus;
    }

    List<Device> nics() {
        return nics;
    }

    /** For every GPU, the NIC sharing the deepest PCIe bridge with it. */
    List<Pairing> pairings() {
        List<Pairing> out = new ArrayList<>();
        for (Device g : gpus) {
            Device best = null;
            int bestShared = 0;
            for (Device n : nics) {
                int shared = sharedBridges(g.chain(), n.chain());
                if (shared > bestShared) {
                    best = n;
                    bestShared = shared;
                }
            }
            out.add(new Pairing(g, best, bestShared));
        }
        return out;
    }

    /** Bridges (PCI addresses above both devices) that two chains have in common, from the root down. */
    static int sharedBridges(List<String> a, List<String> b) {
        int n = 0;
        int max = Math.min(a.size(), b.size()) - 1; // the devices themselves are not bridges
        while (n < max && a.get(n).equals(b.get(n))) {
            n++;
        }
        return n;
    }

    private static Device device(String name, Path link) {
        try {
            Path real = link.toRealPath();
            List<String> chain = new ArrayList<>();
            for (Path part : real) {
                String s = part.toString();
                if (PCI_ADDRESS.matcher(s).matches()) {
                    chain.add(s);
                }
            }
            if (chain.isEmpty()) {
                return null; // virtual device (lo, bridges, tunnels)
            }
            return new Device(name, chain.get(chain.size() - 1), chain);
        } catch (IOException e) {
            return null;
        }
    }

    private static List<Path> list(Path dir) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path p : s) {
                out.add(p);
            }
        } catch (IOException | RuntimeException e) {
            // best effort
        }
        return out;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file).trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
