package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class DoctorTest {

    @TempDir
    Path tmp;

    /** A fake sysfs: two GPUs, one behind the switch of eth1, one alone; eth0 on another root port. */
    private Path sysfs() throws IOException {
        Path sys = tmp.resolve("sys");
        Path root = sys.resolve("devices/pci0000:00");
        Path sw = root.resolve("0000:00:01.0/0000:01:00.0");
        gpu(sys, sw.resolve("0000:02:00.0/0000:03:00.0"));
        nic(sys, "eth1", sw.resolve("0000:02:01.0/0000:04:00.0"));
        gpu(sys, root.resolve("0000:00:02.0/0000:05:00.0"));
        nic(sys, "eth0", root.resolve("0000:00:03.0/0000:06:00.0"));
        Files.createDirectories(sys.resolve("class/net/lo"));
        return sys;
    }

    private static void gpu(Path sys, Path dev) throws IOException {
        Files.createDirectories(dev);
        Files.writeString(dev.resolve("vendor"), "0x10de\n");
        Files.writeString(dev.resolve("class"), "0x030200\n");
        Files.createDirectories(sys.resolve("bus/pci/devices"));
        Files.createSymbolicLink(sys.resolve("bus/pci/devices").resolve(dev.getFileName()), dev);
    }

    private static void nic(Path sys, String name, Path dev) throws IOException {
        Files.createDirectories(dev);
        Files.writeString(dev.resolve("vendor"), "0x1ae0\n");
        Files.writeString(dev.resolve("class"), "0x020000\n");
        Files.createDirectories(sys.resolve("bus/pci/devices"));
        Files.createSymbolicLink(sys.resolve("bus/pci/devices").resolve(dev.getFileName()), dev);
        Path iface = sys.resolve("class/net").resolve(name);
        Files.createDirectories(iface);
        Files.createSymbolicLink(iface.resolve("device"), dev);
    }

    @Test
    void pairsEachGpuWithTheNicUnderItsSwitch() throws IOException {
        PciTopology t = PciTopology.scan(sysfs());
        assertThat(t.gpus()).extracting(PciTopology.Device::address).containsExactly("0000:03:00.0", "0000:05:00.0");
        assertThat(t.nics()).extracting(PciTopology.Device::name).containsExactly("eth0", "eth1");
        var pairs = t.pairings();
        assertThat(pairs.get(0).sameSwitch()).isTrue();
        assertThat(pairs.get(0).nic().name()).isEqualTo("eth1");
        assertThat(pairs.get(0).sharedBridges()).isEqualTo(2);
        assertThat(pairs.get(1).sameSwitch()).isFalse();
    }

    @Test
    void noGpusIsReportedAndDoesNotBlockDram() {
        Cli.Result r = Cli.run("doctor", "--sysfs", tmp.resolve("empty").toString(), "--procfs", tmp.toString());
        assertThat(r.out()).contains("no GPUs found", "java", "tcpx", "cuda", "nccl-env",
                "plugin calls through " + io.tcpx4j.transport.tcpx.Tcpx.callPath());
        assertThat(r.out()).doesNotContain("no GPUs found (NVIDIA");
    }

    @Test
    void topologyIsPrintedPerGpu() throws IOException {
        Cli.Result r = Cli.run("doctor", "--sysfs", sysfs().toString(), "--procfs", tmp.toString());
        assertThat(r.out()).contains("GPU 0000:03:00.0 shares a PCIe switch with eth1")
                .contains("GPU 0000:05:00.0 has no NIC under its PCIe switch");
    }

    @Test
    void tcpxWithoutItsEnvironmentBlocksAndNamesTheFixes() throws IOException {
        Cli.Result r = Cli.run(Map.of(), "doctor", "--transport", "tcpx", "--mem", "vram", "--sysfs", sysfs().toString(),
                "--procfs", tmp.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.out()).contains("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME is not set",
                "fix: export NCCL_GPUDIRECTTCPX_SOCKET_IFNAME=eth1,eth2,eth3,eth4",
                "fix: export NCCL_DYNAMIC_CHUNK_SIZE=524288",
                "cannot load the TCPX plugin",
                "fix: export NCCL_MIN_ZCOPY_SIZE=4096 NCCL_GPUDIRECTTCPX_MIN_ZCOPY_SIZE=4096",
                "problem(s) block --transport tcpx --mem vram");
    }

    @Test
    void tcpxEnvironmentChecksPassWhenSetRight() throws IOException {
        Path sys = sysfs();
        Doctor d = new Doctor(TransportKind.TCPX, io.tcpx4j.api.MemoryKind.VRAM,
                Map.of("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1", "NCCL_GPUDIRECTTCPX_CTRL_DEV", "eth0",
                        "NCCL_DYNAMIC_CHUNK_SIZE", "524288", "NCCL_MIN_ZCOPY_SIZE", "4096",
                        "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX", tmp.toString()), sys, tmp);
        assertThat(d.run()).filteredOn(c -> c.name().equals("nccl-env"))
                .allMatch(c -> c.status() == Check.Status.OK);
        Doctor wrongIface = new Doctor(TransportKind.TCPX, io.tcpx4j.api.MemoryKind.DRAM,
                Map.of("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1,eth9", "NCCL_DYNAMIC_CHUNK_SIZE", "524288"), sys, tmp);
        assertThat(wrongIface.run()).anyMatch(c -> c.blocks() && c.detail().contains("eth9"));
    }

    @Test
    void tcpxDoctorLoadsThePluginAndListsItsDevices() throws IOException {
        // the C test peer that transport-tcpx's build compiles: an ncclNet v7 plugin over kernel sockets
        Path peer = Path.of("..", "transport-tcpx", "target", "native", "libtcpx4j-net-testpeer-v7.so").toAbsolutePath();
        assertThat(peer).as("built by ./mvnw verify -pl cli -am").exists();
        System.setProperty("tcpx4j.tcpx.library", peer.toString());
        try {
            Cli.Result r = Cli.run(Map.of("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "lo", "NCCL_DYNAMIC_CHUNK_SIZE", "524288",
                    "NCCL_GPUDIRECTTCPX_CTRL_DEV", "lo"), "doctor", "--transport", "tcpx", "--procfs", tmp.toString());
            assertThat(r.out()).contains("OK    tcpx      tcpx4j-testpeer-v7 (ncclNet v7, " + peer)
                    .contains("calls through " + io.tcpx4j.transport.tcpx.Tcpx.callPath() + "\n")
                    .contains("INFO  tcpx      device 0: ")
                    .contains("result: ready for --transport tcpx --mem dram");
            assertThat(r.exit()).as(r.out()).isZero();
        } finally {
            System.clearProperty("tcpx4j.tcpx.library");
        }
    }

    @Test
    void anotherPluginIsNotHeldToTcpxVariablesButToLibjsig() throws IOException {
        Path peer = Path.of("..", "transport-tcpx", "target", "native", "libtcpx4j-net-testpeer-v8-nullopt.so").toAbsolutePath();
        assertThat(peer).as("built by ./mvnw verify -pl cli -am").exists();
        System.setProperty("tcpx4j.tcpx.library", peer.toString());
        try {
            Cli.Result r = Cli.run(Map.of(), "doctor", "--transport", "tcpx", "--procfs", tmp.toString());
            assertThat(r.out()).contains("OK    tcpx      tcpx4j-testpeer-v8 (ncclNet v8, " + peer)
                    .contains("NCCL_GPUDIRECTTCPX_* not checked: the loaded plugin is tcpx4j-testpeer-v8, not GPUDirectTCPX")
                    .doesNotContain("SOCKET_IFNAME is not set")
                    .contains("WARN  tcpx      libjsig.so is not preloaded")
                    .contains("fix: run through ./tcpx4j (it preloads it), or export LD_PRELOAD=$JAVA_HOME/lib/libjsig.so")
                    .contains("result: ready for --transport tcpx --mem dram");
            assertThat(r.exit()).as(r.out()).isZero();
        } finally {
            System.clearProperty("tcpx4j.tcpx.library");
        }
    }

    @Test
    void aPluginWhoseInitEndsTheProcessIsBlamedOnCudaNotOnTheInstallation() throws IOException {
        Path built = Path.of("..", "transport-tcpx", "target", "native", "libtcpx4j-net-testpeer-v7.so").toAbsolutePath();
        assertThat(built).as("built by ./mvnw verify -pl cli -am").exists();
        // a private copy: the plugin is probed once per library path and process
        Path peer = Files.copy(built, tmp.resolve("libtcpx4j-net-testpeer-exits.so"));
        com.sun.jna.NativeLibrary c = com.sun.jna.NativeLibrary.getInstance("c");
        System.setProperty("tcpx4j.tcpx.library", peer.toString());
        // the probe's child JVM gets the process environment: the peer's init calls exit(1), as TCPX without CUDA
        c.getFunction("setenv").invokeInt(new Object[] {"TCPX4J_TESTPEER_INIT_EXIT", "1", 1});
        try {
            Cli.Result r = Cli.run(Map.of(), "doctor", "--transport", "tcpx", "--procfs", tmp.toString());
            assertThat(r.out()).contains("cannot load the TCPX plugin", "init ended the probe process")
                    .contains("fix: the plugin was found, but its init ended the process: TCPX does that when the CUDA"
                            + " driver cannot initialise")
                    .doesNotContain("fix: install the TCPX plugin");
            assertThat(r.exit()).isEqualTo(1);
        } finally {
            c.getFunction("unsetenv").invokeInt(new Object[] {"TCPX4J_TESTPEER_INIT_EXIT"});
            System.clearProperty("tcpx4j.tcpx.library");
        }
    }

    @Test
    void aMissingPluginStillSaysToInstallIt() {
        assertThat(Doctor.loadFix(new RuntimeException("no TCPX net plugin found; tried a, b. To fix: ...")))
                .startsWith("install the TCPX plugin");
        assertThat(Doctor.loadFix(new RuntimeException("/x.so: GPUDirectTCPX_v7 init returned ncclInternalError")))
                .contains("SOCKET_IFNAME");
    }

    @Test
    void aFailNoteThatDoesNotBlockTheSelectionKeepsExitZero() {
        Doctor d = new Doctor(TransportKind.LOOPBACK, io.tcpx4j.api.MemoryKind.DRAM, Map.of(), tmp, tmp);
        assertThat(d.run()).noneMatch(c -> c.blocks() && !c.name().equals("loopback"));
    }

    @Test
    void jsonHasEveryCheckAndTheResult() throws IOException {
        Cli.Result r = Cli.run(Map.of(), "doctor", "--json", "--transport", "tcpx", "--sysfs", sysfs().toString(),
                "--procfs", tmp.toString());
        assertThat(r.exit()).isEqualTo(1);
        var doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
        assertThat(doc.get("tool").asText()).isEqualTo("tcpx4j doctor");
        assertThat(doc.get("transport").asText()).isEqualTo("tcpx");
        assertThat(doc.get("ready").asBoolean()).isFalse();
        assertThat(doc.get("blocking").asInt()).isPositive();
        var names = new java.util.ArrayList<String>();
        for (var c : doc.get("checks")) {
            names.add(c.get("name").asText());
            assertThat(c.get("status").asText()).isIn("OK", "INFO", "WARN", "FAIL");
            assertThat(c.has("blocking")).isTrue();
        }
        assertThat(names).contains("java", "loopback", "tcpx", "cuda", "nccl-env", "pci");
        assertThat(doc.get("checks").findValuesAsText("fix")).anyMatch(f -> f.contains("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"));
    }

    @Test
    void helpSaysWhichSelectionsLoadNativeLibraries() {
        Cli.Result r = Cli.run("doctor", "--help");
        assertThat(r.out().replaceAll("\\s+", " ")).contains("--transport tcpx loads the TCPX plugin").contains("--mem vram initialises CUDA")
                .doesNotContain("Read-only and fast: loads no native library.");
    }
}
