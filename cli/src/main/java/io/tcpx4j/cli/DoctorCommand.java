package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code tcpx4j doctor}: checks the JVM, the build, TCPX and CUDA, the NCCL_GPUDIRECTTCPX_*
 * environment and NIC-GPU PCIe proximity, and prints each problem with its fix. Exit 0 if nothing
 * blocks the selected transport and memory, 1 otherwise.
 */
@Command(name = "doctor", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Checks this host for the selected transport and memory; prints each problem with its fix.",
                "Read-only. With the defaults it loads no native library; --transport tcpx loads the TCPX plugin"
                        + " (its init in a child JVM first) and --mem vram initialises CUDA, to list what they find."},
        footer = {"", "Exit codes: 0 nothing blocks the selection, 1 something does, 2 bad flags."})
final class DoctorCommand implements Callable<Integer> {

    private final Io io;

    @Option(names = "--transport", paramLabel = "loopback|tcpx", defaultValue = "loopback",
            description = "Transport to check for. Default: ${DEFAULT-VALUE}.")
    TransportKind transport;

    @Option(names = "--mem", paramLabel = "dram|vram", defaultValue = "dram",
            description = "Memory to check for. Default: ${DEFAULT-VALUE}.")
    MemoryKind memory;

    @Option(names = "--json", description = "Print one JSON document (selection, checks, result) on stdout, nothing else.")
    boolean json;

    @Option(names = "--sysfs", paramLabel = "DIR", defaultValue = "/sys", hidden = true,
            description = "sysfs root (tests).")
    Path sysfs;

    @Option(names = "--procfs", paramLabel = "DIR", defaultValue = "/proc", hidden = true,
            description = "procfs root (tests).")
    Path procfs;

    @Option(names = "--nixl", description = "Check an installation of the NIXL backend instead (see tcpx4j nixl install).")
    boolean nixl;

    @Option(names = "--nixl-prefix", paramLabel = "DIR",
            description = "With --nixl: where NIXL is installed (the directory above lib/). Default:"
                    + " /opt/nvidia/nvda_nixl, else where the loader finds libnixl.so (LD_LIBRARY_PATH, the ldconfig"
                    + " cache).")
    Path nixlPrefix;

    @Option(names = "--plugin-dir", paramLabel = "DIR",
            description = "With --nixl: where TCPX was installed. Default: where NIXL will look.")
    Path pluginDir;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    DoctorCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws java.io.IOException {
        Logs.configure(false, io.err());
        if (!nixl && (nixlPrefix != null || pluginDir != null)) {
            // refused rather than implied: a forgotten --nixl would otherwise check the wrong thing quietly
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), (nixlPrefix != null
                    ? "--nixl-prefix" : "--plugin-dir") + " is for checking a NIXL installation: add --nixl");
        }
        if (nixl) {
            return NixlDoctor.report(io, nixlPrefix, pluginDir, json);
        }
        List<Check> checks = new Doctor(transport, memory, io.env(), sysfs, procfs).run();
        if (json) {
            return printJson(checks);
        }
        io.out().println("tcpx4j doctor: --transport " + transport.label() + " --mem "
                + memory.name().toLowerCase(Locale.ROOT));
        for (Check c : checks) {
            io.out().printf(Locale.ROOT, "  %-5s %-9s %s%n", c.status(), c.name(), c.detail());
            if (c.fix() != null && c.status() != Check.Status.OK && c.status() != Check.Status.INFO) {
                io.out().printf(Locale.ROOT, "  %-5s %-9s fix: %s%n", "", "", c.fix());
            }
        }
        long blocking = checks.stream().filter(Check::blocks).count();
        long warnings = checks.stream().filter(c -> c.status() == Check.Status.WARN
                || (c.status() == Check.Status.FAIL && !c.blocking())).count();
        if (blocking > 0) {
            io.out().println("result: " + blocking + " problem(s) block --transport " + transport.label() + " --mem "
                    + memory.name().toLowerCase(Locale.ROOT) + "; fix them and run tcpx4j doctor again");
        } else {
            io.out().println("result: ready for --transport " + transport.label() + " --mem "
                    + memory.name().toLowerCase(Locale.ROOT) + (warnings > 0 ? " (" + warnings + " warning(s))" : ""));
        }
        io.out().flush();
        return blocking > 0 ? 1 : 0;
    }

    private int printJson(List<Check> checks) throws java.io.IOException {
        var subject = new java.util.LinkedHashMap<String, Object>();
        subject.put("transport", transport.label());
        subject.put("mem", memory.name().toLowerCase(Locale.ROOT));
        return DoctorJson.print(io, subject, checks);
    }
}
