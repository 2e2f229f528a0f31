package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.cuda.Cuda;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.transport.tcpx.Tcpx;
import io.tcpx4j.transport.tcpx.TcpxTransport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The checks of {@code tcpx4j doctor}. Every check is read-only and fast: it looks at the JVM, the
 * classpath (without initialising classes), the environment, files and sysfs. The one exception is
 * {@code --transport tcpx}, which loads the plugin to list its devices — through the transport's
 * child-JVM probe, because the TCPX plugin calls exit(1) from init when the CUDA driver fails, which
 * must never take the doctor down with it.
 *
 * <p>Thread-safe (immutable).
 */
final class Doctor {

    static final String TCPX_PREFIX = "NCCL_GPUDIRECTTCPX_";
    /** Where A3 images install the TCPX plugin (docs/TCPX.md). */
    static final List<String> PLUGIN_PATHS = List.of("/usr/local/tcpx/lib64/libnccl-net-tcpx.so",
            "/var/lib/tcpx/lib64/libnccl-net.so");

    private final TransportKind transport;
    private final MemoryKind memory;
    private final Map<String, String> env;
    private final Path sysfs;
    private final Path procfs;

    Doctor(TransportKind transport, MemoryKind memory, Map<String, String> env, Path sysfs, Path procfs) {
        this.transport = transport;
        this.memory = memory;
        this.env = Map.copyOf(env);
        this.sysfs = sysfs;
        this.procfs = procfs;
    }

    List<Check> run() {
        List<Check> out = new ArrayList<>();
        out.add(java());
        out.add(loopback());
        String[] loaded = new String[1];
        out.addAll(tcpx(loaded));
        out.addAll(cuda());
        out.addAll(ncclEnv(loaded[0]));
        out.addAll(topology());
        return out;
    }

    private Check java() {
        Runtime.Version v = Runtime.version();
        String detail = v + " (" + System.getProperty("java.vendor") + "), " + System.getProperty("java.home");
        if (v.feature() < 17) {
            return Check.fail("java", detail, "install a JDK 17 or newer and put it on the PATH (or set JAVA_HOME)", true);
        }
        return Check.ok("java", detail);
    }

    private Check loopback() {
        return Check.ok("loopback", "transport-loopback built in (kernel TCP, no GPU needed)");
    }

    /** @param loaded receives the loaded plugin's name when {@code --transport tcpx} loaded one */
    private List<Check> tcpx(String[] loaded) {
        List<Check> out = new ArrayList<>();
        boolean selected = transport == TransportKind.TCPX;
        List<String> found = new ArrayList<>();
        for (String var : List.of("TCPX4J_NET_PLUGIN", "NCCL_NET_PLUGIN")) {
            String v = env.get(var);
            if (v != null && v.contains("/") && Files.isRegularFile(Path.of(v))) {
                found.add(v + " (" + var + ")");
            }
        }
        for (String p : PLUGIN_PATHS) {
            if (Files.isRegularFile(Path.of(p))) {
                found.add(p);
            }
        }
        String plugins = found.isEmpty() ? "no TCPX plugin file at " + String.join(", ", PLUGIN_PATHS)
                : "plugin file(s): " + String.join(", ", found);
        if (!selected) {
            out.add(Check.info("tcpx", "transport-tcpx built in; " + plugins
                    + " (run 'tcpx4j doctor --transport tcpx' to load and list it); plugin calls through "
                    + Tcpx.callPath()));
            return out;
        }
        out.addAll(loadTcpx(loaded));
        return out;
    }

    /**
     * Loads the plugin and lists its devices. Safe: the transport runs the plugin's init in a child JVM
     * first (it calls exit(1) when CUDA fails), and only then here.
     */
    private List<Check> loadTcpx(String[] loaded) {
        List<Check> out = new ArrayList<>();
        try (TcpxTransport t = Backends.tcpxForInspection(new HostMemory())) {
            loaded[0] = t.pluginName();
            out.add(Check.ok("tcpx", t.pluginDescription() + ", " + t.deviceCount() + " device(s), capabilities "
                    + t.capabilities() + ", calls through " + Tcpx.callPath()));
            for (int d = 0; d < t.deviceCount(); d++) {
                DeviceProperties p = t.properties(d);
                out.add(Check.info("tcpx", "device " + d + ": " + p.name()
                        + (p.pciPath().isEmpty() ? " (no PCI path)" : " " + p.pciPath()) + ", "
                        + p.speedMbps() + " Mbps, ptr " + p.ptrSupport() + ", max comms " + p.maxComms()));
            }
            if (t.deviceCount() == 0) {
                out.add(Check.fail("tcpx", "the plugin reports no network devices",
                        "set " + TCPX_PREFIX + "SOCKET_IFNAME to the data NICs (A3: eth1,eth2,eth3,eth4)", true));
            }
        } catch (RuntimeException | LinkageError e) {
            out.add(Check.fail("tcpx", "cannot load the TCPX plugin: " + e.getMessage(), loadFix(e), true));
        }
        out.add(jsig(loaded[0]));
        return out;
    }

    /** The fix for a plugin that did not load, by what went wrong. */
    static String loadFix(Throwable e) {
        String m = String.valueOf(e.getMessage());
        if (m.contains(Tcpx.INIT_ENDED_PROCESS)) {
            return "the plugin was found, but its init ended the process: TCPX does that when the CUDA driver cannot"
                    + " initialise. Check nvidia-smi, that libcuda.so.1 is on the loader path (A3:"
                    + " LD_LIBRARY_PATH=/usr/local/nvidia/lib64) and that CUDA_VISIBLE_DEVICES names a GPU";
        }
        if (m.contains("init returned")) {
            return "the plugin was found, but its init failed: check that " + TCPX_PREFIX + "SOCKET_IFNAME names existing"
                    + " interfaces and " + TCPX_PREFIX + "SOCKET_ENABLE is not 0; the plugin's log (System.Logger"
                    + " io.tcpx4j.transport.tcpx.plugin at DEBUG) says why";
        }
        if (!m.startsWith("no TCPX net plugin found") && m.contains("cannot load")) {
            return "the plugin file was found but does not load: add the directories of the libraries it needs to"
                    + " LD_LIBRARY_PATH (CUDA on A3: /usr/local/nvidia/lib64); see docs/TCPX.md section 7";
        }
        return "install the TCPX plugin (A3 images: /usr/local/tcpx/lib64) or point TCPX4J_NET_PLUGIN at it;"
                + " see docs/TCPX.md";
    }

    /**
     * Whether the JVM's libjsig.so is preloaded: a plugin that pulls in a library with its own SIGSEGV
     * handler (aws-ofi-nccl: libfabric loads libpsm2) replaces the JVM's handler without it, and the JVM
     * dies on its first implicit null check. {@code ./tcpx4j} preloads it.
     */
    private Check jsig(String plugin) {
        String preload = env.getOrDefault("LD_PRELOAD", "");
        if (preload.contains("libjsig")) {
            return Check.ok("tcpx", "libjsig.so is preloaded (plugins may install their own signal handlers)");
        }
        String detail = "libjsig.so is not preloaded: a plugin whose libraries install signal handlers (libfabric's"
                + " libpsm2) would crash the JVM";
        String fix = "run through ./tcpx4j (it preloads it), or export LD_PRELOAD=$JAVA_HOME/lib/libjsig.so";
        return plugin != null && !isTcpx(plugin) ? Check.warn("tcpx", detail, fix)
                : Check.info("tcpx", detail + " (TCPX itself installs none); " + fix);
    }

    static boolean isTcpx(String pluginName) {
        return pluginName.startsWith(Tcpx.TCPX_PLUGIN_NAME);
    }

    private List<Check> cuda() {
        List<Check> out = new ArrayList<>();
        boolean needed = memory == MemoryKind.VRAM;
        String driver = driverVersion();
        String driverText = driver != null ? "NVIDIA driver: " + driver : "no NVIDIA kernel driver loaded";
        if (!needed) {
            out.add(Check.info("cuda", "cuda-unpack built in; " + driverText
                    + " (run 'tcpx4j doctor --mem vram' to initialise CUDA and list GPUs)"));
            return out;
        }
        // --mem vram asked for it: load JCuda's native library and cuInit (failures are returned, not fatal)
        if (Cuda.isAvailable()) {
            int v = Cuda.driverVersion();
            out.add(Check.ok("cuda", "CUDA driver API " + v / 1000 + "." + (v % 1000) / 10 + ", " + Cuda.deviceCount()
                    + " GPU(s); " + driverText));
        } else {
            out.add(Check.fail("cuda", "CUDA is not usable: " + Main.shortCause(Cuda.unavailabilityCause())
                            + "; " + driverText,
                    "install the NVIDIA driver (R535+, libcuda.so.1 on the loader path) on a GPU host, or use --mem dram",
                    true));
        }
        return out;
    }

    private String driverVersion() {
        try {
            Path p = procfs.resolve("driver/nvidia/version");
            if (!Files.isRegularFile(p)) {
                return null;
            }
            String first = Files.readAllLines(p).stream().findFirst().orElse("").trim();
            return first.isEmpty() ? "unknown version" : first;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** @param plugin the loaded plugin's name, or null when none was loaded (TCPX's variables are checked then) */
    private List<Check> ncclEnv(String plugin) {
        List<Check> out = new ArrayList<>();
        if (transport != TransportKind.TCPX) {
            long set = env.keySet().stream().filter(k -> k.startsWith("NCCL_")).count();
            out.add(Check.info("nccl-env", "not used by --transport " + transport.label() + " (" + set
                    + " NCCL_* variable(s) set); run 'tcpx4j doctor --transport tcpx' on A3 hosts"));
            return out;
        }
        if (plugin != null && !isTcpx(plugin)) {
            out.add(Check.info("nccl-env", TCPX_PREFIX + "* not checked: the loaded plugin is " + plugin + ", not "
                    + Tcpx.TCPX_PLUGIN_NAME + "; see that plugin's documentation for its settings"));
            return out;
        }
        String ifnames = env.get(TCPX_PREFIX + "SOCKET_IFNAME");
        if (ifnames == null || ifnames.isBlank()) {
            out.add(Check.fail("nccl-env", TCPX_PREFIX + "SOCKET_IFNAME is not set: TCPX does not know its data NICs",
                    "export " + TCPX_PREFIX + "SOCKET_IFNAME=eth1,eth2,eth3,eth4   (the A3 data NICs)", true));
        } else {
            List<String> missing = new ArrayList<>();
            for (String i : ifnames.split(",")) {
                if (!i.isBlank() && !Files.exists(sysfs.resolve("class/net").resolve(i.trim()))) {
                    missing.add(i.trim());
                }
            }
            out.add(missing.isEmpty()
                    ? Check.ok("nccl-env", TCPX_PREFIX + "SOCKET_IFNAME=" + ifnames)
                    : Check.fail("nccl-env", TCPX_PREFIX + "SOCKET_IFNAME names interfaces that do not exist: "
                            + String.join(",", missing), "list existing interfaces (ls /sys/class/net)", true));
        }
        String ctrl = env.get(TCPX_PREFIX + "CTRL_DEV");
        if (ctrl == null || ctrl.isBlank()) {
            out.add(Check.warn("nccl-env", TCPX_PREFIX + "CTRL_DEV is not set (control traffic may use a data NIC)",
                    "export " + TCPX_PREFIX + "CTRL_DEV=eth0"));
        } else {
            out.add(Check.ok("nccl-env", TCPX_PREFIX + "CTRL_DEV=" + ctrl));
        }
        String chunk = env.get("NCCL_DYNAMIC_CHUNK_SIZE");
        if (chunk == null || chunk.isBlank()) {
            out.add(Check.warn("nccl-env", "NCCL_DYNAMIC_CHUNK_SIZE is not set: TCPX transfers hang without it;"
                            + " tcpx4j sets 524288 before the plugin's init, other NCCL users on this host do not",
                    "export NCCL_DYNAMIC_CHUNK_SIZE=524288"));
        } else {
            out.add(Check.ok("nccl-env", "NCCL_DYNAMIC_CHUNK_SIZE=" + chunk));
        }
        if (memory == MemoryKind.VRAM) {
            // The 2024 plugin reads NCCL_MIN_ZCOPY_SIZE (its parameter macro adds only NCCL_); the first design and
            // older guides say NCCL_GPUDIRECTTCPX_MIN_ZCOPY_SIZE. Either set to 4096 is accepted.
            String zcopy = env.get("NCCL_MIN_ZCOPY_SIZE");
            String zcopyAlias = env.get(TCPX_PREFIX + "MIN_ZCOPY_SIZE");
            if (!"4096".equals(zcopy) && !"4096".equals(zcopyAlias)) {
                out.add(Check.warn("nccl-env", "NCCL_MIN_ZCOPY_SIZE is " + (zcopy == null ? "not set" : zcopy)
                                + ": GPU-memory transfers below the plugin's default miss the zero-copy path",
                        "export NCCL_MIN_ZCOPY_SIZE=4096 " + TCPX_PREFIX + "MIN_ZCOPY_SIZE=4096   (the plugin reads the"
                                + " first; setting both is harmless)"));
            } else {
                out.add(Check.ok("nccl-env", "MIN_ZCOPY_SIZE=4096"));
            }
            String prefix = env.get(TCPX_PREFIX + "UNIX_CLIENT_PREFIX");
            if (prefix == null || prefix.isBlank()) {
                out.add(Check.warn("nccl-env", TCPX_PREFIX + "UNIX_CLIENT_PREFIX is not set (where the receive-datapath"
                                + " manager's sockets are)", "export " + TCPX_PREFIX + "UNIX_CLIENT_PREFIX=/run/tcpx"));
            } else if (!Files.isDirectory(Path.of(prefix))) {
                out.add(Check.fail("nccl-env", TCPX_PREFIX + "UNIX_CLIENT_PREFIX=" + prefix + " is not a directory",
                        "start the tcpgpudmarxd container with that directory mounted, or fix the variable", true));
            }
        }
        return out;
    }

    private List<Check> topology() {
        List<Check> out = new ArrayList<>();
        PciTopology t = PciTopology.scan(sysfs);
        if (t.gpus().isEmpty()) {
            out.add(memory == MemoryKind.VRAM
                    ? Check.fail("pci", "no GPUs found (NVIDIA 0x10de, class 0x0302) under " + sysfs.resolve("bus/pci/devices"),
                            "run on a GPU host, or use --mem dram", true)
                    : Check.info("pci", "no GPUs found; " + t.nics().size() + " PCI network interface(s)"));
            return out;
        }
        boolean gpuDirect = transport == TransportKind.TCPX && memory == MemoryKind.VRAM;
        for (PciTopology.Pairing p : t.pairings()) {
            String gpu = "GPU " + p.gpu().address();
            if (p.sameSwitch()) {
                out.add(Check.ok("pci", gpu + " shares a PCIe switch with " + p.nic().name() + " (" + p.nic().address()
                        + ", " + p.sharedBridges() + " common bridge(s))"));
            } else {
                String detail = gpu + " has no NIC under its PCIe switch: GPUDirect traffic crosses the root complex";
                out.add(gpuDirect
                        ? Check.warn("pci", detail, "use a VM shape with per-GPU-pair NICs (A3) and list those NICs in "
                                + TCPX_PREFIX + "SOCKET_IFNAME")
                        : Check.info("pci", detail));
            }
        }
        return out;
    }
}
