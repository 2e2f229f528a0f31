package io.tcpx4j.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * {@code tcpx4j nixl install}: builds the NIXL backend from this source tree and installs it where
 * NIXL finds it. One step: the Java side (Maven wrapper), the bridge and {@code libplugin_TCPX.so}
 * (meson against the installed NIXL), the jars under {@code tcpx4j/} beside the bridge and the
 * class-path file {@code tcpx4j-classpath.txt} that the bridge reads, so that no {@code TCPX4J_*}
 * variable is needed at run time. The default directory is NIXL's own plugin directory (where
 * libnixl.so's {@code plugins/} is), which NIXL searches without {@code NIXL_PLUGIN_DIR}; another
 * {@code --plugin-dir} also gets links to NIXL's own plugins, because {@code NIXL_PLUGIN_DIR}
 * replaces NIXL's directory instead of adding to it.
 */
@Command(name = "install", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Builds the NIXL backend (plugin, bridge, jars) from this source tree and installs it where NIXL "
                + "finds it.", "Needs a JDK 17+, gcc/g++, meson, ninja and pkg-config (for the Abseil NIXL was built with)."},
        footer = {"", "Exit codes: 0 installed, 1 a build or install step failed, 2 bad flags. Docs: docs/NIXL.md"})
final class NixlInstallCommand implements Callable<Integer> {

    /** The name of the class-path file beside the bridge (the bridge's TCPX4J_NIXL_CLASSPATH_FILE). */
    static final String CLASSPATH_FILE = "tcpx4j-classpath.txt";
    static final String JAR_DIR = "tcpx4j";
    static final String PLUGIN = "libplugin_TCPX.so";
    static final String BRIDGE = "libtcpx4j_nixl_bridge.so";
    /** The modules whose jars (with their runtime dependencies) the bridge's JVM loads. */
    static final List<String> MODULES = List.of("nixl-backend", "transport-tcpx", "cuda-unpack");

    private final Io io;

    @Option(names = "--nixl-prefix", paramLabel = "DIR", defaultValue = "/opt/nvidia/nvda_nixl",
            description = "Where NIXL is installed (include/, lib/). Default: ${DEFAULT-VALUE}.")
    Path nixlPrefix;

    @Option(names = "--plugin-dir", paramLabel = "DIR",
            description = "Install directory. Default: NIXL's own plugin directory (<directory of libnixl.so>/plugins).")
    Path pluginDir;

    @Option(names = "--java-home", paramLabel = "DIR",
            description = "JDK 17+ whose JNI headers the bridge is built with. Default: JAVA_HOME, else this JVM's.")
    Path javaHome;

    @Option(names = "--examples", description = "Also build the examples tcpx_two_agents and tcpx_bench (in the build directory).")
    boolean examples;

    @Option(names = "--source", paramLabel = "DIR", hidden = true,
            description = "The tcpx4j source tree (default: the one this command runs from).")
    Path source;

    NixlInstallCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        Logs.configure(false, io.err());
        Path root = source != null ? source.toAbsolutePath().normalize() : sourceTree();
        Path prefix = nixlPrefix.toAbsolutePath().normalize();
        Path libnixl = NixlDoctor.findLibnixl(prefix);
        if (!Files.isRegularFile(prefix.resolve("include/backend/backend_plugin.h")) || libnixl == null) {
            throw new Unavailable("no NIXL installation under " + prefix + " (include/backend/backend_plugin.h and"
                    + " lib*/libnixl.so): pass --nixl-prefix DIR");
        }
        Path nixlPlugins = libnixl.getParent().resolve("plugins");
        Path dir = (pluginDir != null ? pluginDir : nixlPlugins).toAbsolutePath().normalize();
        Path jdk = jdk();
        Path log = root.resolve("nixl-backend/target/nixl-install.log");
        Files.createDirectories(log.getParent());
        Files.deleteIfExists(log);

        step("building the Java side (" + String.join(", ", MODULES) + ")");
        run(root, log, io.env(), Map.of("JAVA_HOME", jdk.toString()), root.resolve("mvnw").toString(), "-B", "-q", "-DskipTests", "-Dmaven.javadoc.skip", "-Dmaven.source.skip",
                "-pl", String.join(",", MODULES), "-am", "package", "dependency:build-classpath",
                "-DincludeScope=runtime", "-Dmdep.outputFile=target/runtime-classpath.txt");
        List<Path> jars = jars(root);

        step("building libplugin_TCPX.so and the bridge against NIXL in " + prefix);
        Path build = root.resolve("nixl-backend/target/nixl-plugin-build");
        // the build directory is made afresh; examples an earlier install built there are built again
        boolean withExamples = examples || builtExamples(build);
        if (withExamples && !examples) {
            io.out().println("  also building the examples again (an earlier install built them in " + build + ")");
        }
        deleteTree(build);
        List<String> setup = new ArrayList<>(List.of("meson", "setup", build.toString(),
                root.resolve("nixl-backend/src/main/native/plugin").toString(), "-Dnixl_prefix=" + prefix,
                "-Dplugin_dir=" + dir));
        if (withExamples) {
            setup.add("-Dexamples=true");
        }
        Map<String, String> jenv = Map.of("JAVA_HOME", jdk.toString(), "TCPX4J_JAVA_HOME", jdk.toString());
        run(root, log, io.env(), jenv, setup.toArray(String[]::new));
        run(root, log, io.env(), jenv, "meson", "compile", "-C", build.toString());

        step("installing into " + dir);
        run(root, log, io.env(), jenv, "meson", "install", "--no-rebuild", "-C", build.toString());
        Path jarDir = dir.resolve(JAR_DIR);
        deleteTree(jarDir);
        Files.createDirectories(jarDir);
        List<String> entries = new ArrayList<>();
        for (Path jar : jars) {
            Files.copy(jar, jarDir.resolve(jar.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            entries.add(JAR_DIR + "/" + jar.getFileName());
        }
        Files.writeString(dir.resolve(CLASSPATH_FILE), "# written by tcpx4j nixl install; entries relative to this"
                + " directory; TCPX4J_CLASSPATH overrides this file\n" + String.join("\n", entries) + "\n");
        io.out().println("  " + jars.size() + " jars in " + jarDir + ", class path in " + dir.resolve(CLASSPATH_FILE));
        if (!dir.equals(nixlPlugins.toAbsolutePath().normalize())) {
            int linked = linkNixlPlugins(nixlPlugins, dir);
            io.out().println("  linked " + linked + " of NIXL's plugins from " + nixlPlugins + " (NIXL_PLUGIN_DIR=" + dir
                    + " replaces NIXL's own directory)");
        }
        if (withExamples) {
            io.out().println("  examples: " + build.resolve("tcpx_two_agents") + ", " + build.resolve("tcpx_bench"));
        }

        // checked in the environment the agents will have: NIXL_PLUGIN_DIR set when TCPX is not in NIXL's own directory
        Map<String, String> agentEnv = new java.util.HashMap<>(io.env());
        if (!dir.equals(nixlPlugins.toAbsolutePath().normalize())) {
            agentEnv.put("NIXL_PLUGIN_DIR", dir.toString());
        }
        List<Check> checks = new NixlDoctor(agentEnv, prefix, dir).run();
        NixlDoctor.print(io, checks);
        boolean ok = checks.stream().noneMatch(Check::blocks);
        io.out().println(ok ? "installed: NIXL agents load TCPX from " + dir + (dir.equals(nixlPlugins)
                ? " (NIXL's own plugin directory: no NIXL_PLUGIN_DIR needed)" : " (set NIXL_PLUGIN_DIR=" + dir + ")")
                : "installed, but the checks above found problems");
        io.out().flush();
        return ok ? 0 : Main.EXIT_FAILURE;
    }

    private void step(String what) {
        io.out().println("tcpx4j nixl install: " + what);
        io.out().flush();
    }

    /** The source tree this command runs from: the jar is cli/target/tcpx4j-cli.jar in it. */
    static Path sourceTree() {
        Path here;
        try {
            here = Path.of(NixlInstallCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | RuntimeException e) {
            throw new Unavailable("cannot tell where tcpx4j runs from: pass --source DIR (a tcpx4j source tree)");
        }
        for (Path p = here; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("nixl-backend/src/main/native/plugin/meson.build"))
                    && Files.isRegularFile(p.resolve("mvnw"))) {
                return p;
            }
        }
        throw new Unavailable("tcpx4j nixl install builds from a tcpx4j source tree: run ./tcpx4j nixl install from a clone");
    }

    private Path jdk() {
        Path j = javaHome != null ? javaHome
                : io.env().get("JAVA_HOME") != null && !io.env().get("JAVA_HOME").isBlank()
                ? Path.of(io.env().get("JAVA_HOME")) : Path.of(System.getProperty("java.home"));
        if (!Files.isRegularFile(j.resolve("include/jni.h"))) {
            throw new Unavailable(j + " has no include/jni.h: pass --java-home DIR (a JDK 17+, not a JRE)");
        }
        return j;
    }

    /** The module jars and their runtime dependencies, each once, in class-path order. */
    static List<Path> jars(Path root) throws IOException {
        Set<Path> jars = new LinkedHashSet<>();
        for (String module : MODULES) {
            Path target = root.resolve(module).resolve("target");
            try (Stream<Path> s = Files.list(target)) {
                s.filter(p -> {
                    String n = p.getFileName().toString();
                    return n.startsWith("tcpx4j-") && n.endsWith(".jar") && !n.endsWith("-sources.jar")
                            && !n.endsWith("-javadoc.jar") && !n.endsWith("-tests.jar");
                }).sorted().forEach(jars::add);
            }
            Path cp = target.resolve("runtime-classpath.txt");
            if (!Files.isRegularFile(cp)) {
                throw new IOException("the build wrote no " + cp);
            }
            for (String entry : Files.readString(cp).strip().split(":")) {
                if (!entry.isBlank()) {
                    jars.add(Path.of(entry.strip()));
                }
            }
        }
        for (Path jar : jars) {
            if (!Files.isRegularFile(jar)) {
                throw new IOException("the class path names " + jar + ", which is not a file");
            }
        }
        return new ArrayList<>(jars);
    }

    /** Links NIXL's own plugins into {@code dir} (not TCPX, not over existing files); returns how many. */
    static int linkNixlPlugins(Path nixlPlugins, Path dir) throws IOException {
        if (!Files.isDirectory(nixlPlugins)) {
            return 0;
        }
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(nixlPlugins, "libplugin_*.so")) {
            for (Path p : ds) {
                Path link = dir.resolve(p.getFileName());
                if (!p.getFileName().toString().equals(PLUGIN) && !Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    Files.createSymbolicLink(link, p.toAbsolutePath());
                    n++;
                }
            }
        }
        return n;
    }

    /** The examples' programs, where {@code -Dexamples=true} builds them in the build directory. */
    static final List<String> EXAMPLES = List.of("tcpx_two_agents", "tcpx_bench");

    /** Whether {@code build} holds examples an earlier install built. */
    static boolean builtExamples(Path build) {
        return EXAMPLES.stream().anyMatch(e -> Files.isRegularFile(build.resolve(e)));
    }

    /**
     * The environment of the build's child processes: {@code base} without the JVM's libjsig.so in
     * LD_PRELOAD. The ./tcpx4j launcher preloads it for this JVM (signal chaining for NCCL plugins);
     * in Maven's JVM and the compilers it only makes each JVM warn that signal() and sigset() are
     * deprecated.
     */
    static Map<String, String> childEnvironment(Map<String, String> base) {
        Map<String, String> env = new java.util.HashMap<>(base);
        String preload = env.get("LD_PRELOAD");
        if (preload != null) {
            String kept = java.util.Arrays.stream(preload.split("[: ]"))
                    .filter(e -> !e.isBlank() && !Path.of(e).getFileName().toString().equals("libjsig.so"))
                    .collect(java.util.stream.Collectors.joining(":"));
            if (kept.isEmpty()) {
                env.remove("LD_PRELOAD");
            } else {
                env.put("LD_PRELOAD", kept);
            }
        }
        return env;
    }

    private static void run(Path dir, Path log, Map<String, String> base, Map<String, String> env, String... command)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().clear();
        pb.environment().putAll(childEnvironment(base));
        pb.environment().putAll(env);
        Files.writeString(log, "$ " + String.join(" ", command) + "\n", java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new Unavailable("cannot run " + command[0] + " (" + e.getMessage() + "): install it (Debian: apt-get"
                    + " install meson ninja-build g++ pkg-config) and run tcpx4j nixl install again");
        }
        int rc = p.waitFor();
        if (rc != 0) {
            List<String> lines = Files.readAllLines(log);
            String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 25), lines.size()));
            throw new IllegalStateException(String.format(Locale.ROOT, "'%s' failed with exit code %d; the end of %s:%n%s",
                    String.join(" ", command), rc, log, tail));
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(q -> {
                try {
                    Files.delete(q);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    /** {@code tcpx4j nixl}: the NIXL backend's commands. */
    @Command(name = "nixl", mixinStandardHelpOptions = true,
            description = "The NIXL backend TCPX: install builds and installs it (see also: tcpx4j doctor --nixl).")
    static final class Group implements Runnable {
        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public void run() {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "missing command: install");
        }
    }

    /** The {@code nixl} command with its subcommands, for {@link Main}. */
    static picocli.CommandLine group(Io io) {
        return new picocli.CommandLine(new Group()).addSubcommand("install", new NixlInstallCommand(io));
    }
}
