package io.tcpx4j.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * {@code tcpx4j doctor --nixl}: checks an installation of the NIXL backend — the directory NIXL
 * will search, the plugin and the bridge in it, the bridge's class path and the Java runtime it
 * will load, what the plugin's libraries resolve to, and whether NIXL's own plugins stay reachable.
 * Read-only; runs {@code ldd} and nothing else.
 */
final class NixlDoctor {

    /** Where NIXL's install puts it unless told otherwise (its meson prefix). */
    static final Path DEFAULT_PREFIX = Path.of("/opt/nvidia/nvda_nixl");
    /** The directories under a prefix where NIXL's install puts libnixl.so, in search order. */
    static final List<String> LIB_DIRS = List.of("lib/x86_64-linux-gnu", "lib64", "lib");

    private final Map<String, String> env;
    private final Path nixlPrefix;
    private final Path pluginDir;
    private final java.util.function.Supplier<List<String>> ldconfigCache;
    /** The install command for the NIXL that {@link #run()} found (with its prefix). */
    private String installFix = "./tcpx4j nixl install";

    /**
     * @param env        the environment NIXL will run with
     * @param nixlPrefix where NIXL is installed, or null to search {@link #DEFAULT_PREFIX}, then the
     *                   loader path (LD_LIBRARY_PATH, then the ldconfig cache)
     * @param pluginDir  where the TCPX plugin was installed, or null for "where NIXL will look"
     */
    NixlDoctor(Map<String, String> env, Path nixlPrefix, Path pluginDir) {
        this(env, nixlPrefix, pluginDir, NixlDoctor::ldconfigCache);
    }

    /** As above, with the lines of {@code ldconfig -p} from {@code ldconfigCache} (tests). */
    NixlDoctor(Map<String, String> env, Path nixlPrefix, Path pluginDir,
               java.util.function.Supplier<List<String>> ldconfigCache) {
        this.env = Map.copyOf(env);
        this.nixlPrefix = nixlPrefix;
        this.pluginDir = pluginDir;
        this.ldconfigCache = ldconfigCache;
    }

    /** libnixl.so under a NIXL prefix (lib/x86_64-linux-gnu, lib64, lib), or null. */
    static Path findLibnixl(Path prefix) {
        for (String d : LIB_DIRS) {
            Path p = prefix.resolve(d).resolve("libnixl.so");
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * libnixl.so where the dynamic loader finds it: in a directory of {@code LD_LIBRARY_PATH}, else
     * in the ldconfig cache (lines of {@code ldconfig -p}: {@code "libnixl.so (libc6,x86-64) => /path"}).
     */
    static Path onLoaderPath(Map<String, String> env, List<String> ldconfigCache) {
        String path = env.get("LD_LIBRARY_PATH");
        if (path != null) {
            for (String d : path.split(":")) {
                if (!d.isBlank() && Files.isRegularFile(Path.of(d, "libnixl.so"))) {
                    return Path.of(d, "libnixl.so").toAbsolutePath().normalize();
                }
            }
        }
        for (String line : ldconfigCache) {
            String l = line.strip();
            int arrow = l.indexOf("=>");
            if (l.startsWith("libnixl.so ") && arrow > 0) {
                Path p = Path.of(l.substring(arrow + 2).strip());
                if (Files.isRegularFile(p)) {
                    return p;
                }
            }
        }
        return null;
    }

    /** The prefix a libnixl.so was installed under: the directory above lib/x86_64-linux-gnu, lib64 or lib. */
    static Path prefixOf(Path libnixl) {
        Path dir = libnixl.getParent();
        if (dir.getFileName() != null && dir.getFileName().toString().equals("x86_64-linux-gnu")
                && dir.getParent() != null && dir.getParent().getFileName() != null
                && dir.getParent().getFileName().toString().equals("lib")) {
            return dir.getParent().getParent();
        }
        return dir.getParent() != null ? dir.getParent() : dir;
    }

    /** The lines of {@code ldconfig -p}, or none when it cannot run. */
    static List<String> ldconfigCache() {
        for (String ldconfig : List.of("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig")) {
            if (ldconfig.startsWith("/") && !Files.isExecutable(Path.of(ldconfig))) {
                continue;
            }
            try {
                Process p = new ProcessBuilder(ldconfig, "-p").redirectErrorStream(true).start();
                List<String> out;
                try (var r = p.inputReader()) {
                    out = r.lines().toList();
                }
                if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return out;
                }
                p.destroyForcibly();
            } catch (IOException e) {
                // try the next one
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return List.of();
            }
        }
        return List.of();
    }

    /** Where the checks found NIXL: the prefix given, else the default prefix or the loader path. */
    private Path[] locate() {
        if (nixlPrefix != null) {
            return new Path[] {nixlPrefix, findLibnixl(nixlPrefix)};
        }
        Path lib = findLibnixl(DEFAULT_PREFIX);
        if (lib != null) {
            return new Path[] {DEFAULT_PREFIX, lib};
        }
        lib = onLoaderPath(env, ldconfigCache.get());
        return lib != null ? new Path[] {prefixOf(lib), lib} : new Path[] {null, null};
    }

    private static String looked(Path prefix) {
        List<String> where = new ArrayList<>();
        for (String d : LIB_DIRS) {
            where.add(prefix.resolve(d).toString());
        }
        return String.join(", ", where);
    }

    List<Check> run() {
        List<Check> checks = new ArrayList<>();
        Path[] found = locate();
        Path nixlPrefix = found[0];
        Path libnixl = found[1];
        Path nixlPlugins = libnixl == null ? null : libnixl.getParent().resolve("plugins");
        installFix = "./tcpx4j nixl install" + (nixlPrefix == null ? "" : " --nixl-prefix " + nixlPrefix);
        if (libnixl == null && this.nixlPrefix != null) {
            checks.add(Check.fail("nixl", "no libnixl.so under --nixl-prefix " + nixlPrefix + " (looked in "
                            + looked(nixlPrefix) + ")",
                    "pass --nixl-prefix DIR, the directory NIXL was installed into (its meson --prefix, the one"
                            + " with lib/x86_64-linux-gnu/libnixl.so, lib64/libnixl.so or lib/libnixl.so)",
                    pluginDir == null));
        } else if (libnixl == null) {
            String ld = blankToNull(env.get("LD_LIBRARY_PATH"));
            checks.add(Check.fail("nixl", "no libnixl.so in " + looked(DEFAULT_PREFIX) + ", on LD_LIBRARY_PATH ("
                            + (ld == null ? "unset" : ld) + ") or in the ldconfig cache",
                    "pass --nixl-prefix DIR, the directory NIXL was installed into (its meson --prefix)",
                    pluginDir == null));
        } else {
            checks.add(Check.ok("nixl", "NIXL at " + nixlPrefix + " (" + libnixl + "), its own plugin directory "
                    + nixlPlugins));
        }

        String envDir = blankToNull(env.get("NIXL_PLUGIN_DIR"));
        Path searched = envDir != null ? Path.of(envDir) : nixlPlugins;
        if (envDir != null) {
            checks.add(Check.info("plugin-dir", "NIXL_PLUGIN_DIR=" + envDir + ": NIXL searches only this directory"
                    + " (it replaces NIXL's own, it does not add to it)"));
        }
        Path dir = pluginDir != null ? pluginDir : searched;
        if (dir == null) {
            return checks;
        }
        if (searched != null && !same(dir, searched)) {
            checks.add(Check.fail("plugin-dir", "TCPX is installed in " + dir + " but NIXL will search " + searched,
                    "export NIXL_PLUGIN_DIR=" + dir + " (or install into " + searched + ")", true));
        }

        Path plugin = dir.resolve(NixlInstallCommand.PLUGIN);
        Path bridge = dir.resolve(NixlInstallCommand.BRIDGE);
        if (!Files.isRegularFile(plugin)) {
            boolean inNixlsOwn = envDir != null && nixlPlugins != null
                    && Files.isRegularFile(nixlPlugins.resolve(NixlInstallCommand.PLUGIN));
            checks.add(Check.fail("plugin", "no " + NixlInstallCommand.PLUGIN + " in " + dir,
                    inNixlsOwn ? "unset NIXL_PLUGIN_DIR: TCPX is installed in NIXL's own directory " + nixlPlugins
                            : installFix, true));
            return checks;
        }
        checks.add(Check.ok("plugin", plugin.toString()));
        checks.add(Files.isRegularFile(bridge) ? Check.ok("bridge", bridge.toString())
                : Check.fail("bridge", "no " + NixlInstallCommand.BRIDGE + " beside the plugin",
                installFix, true));
        checks.add(ldd(plugin));
        checks.add(classPath(dir));
        checks.add(java());
        if (envDir != null && nixlPlugins != null && !same(searched, nixlPlugins)) {
            checks.add(nixlOwnPlugins(nixlPlugins, searched));
        }
        for (Map.Entry<String, String> e : new java.util.TreeMap<>(env).entrySet()) {
            if (e.getKey().startsWith("TCPX4J_NIXL_")) {
                checks.add(Check.info("nixl-env", e.getKey() + "=" + e.getValue()
                        + " (wins over a parameter equal to its advertised default)"));
            }
        }
        return checks;
    }

    private Check classPath(Path dir) {
        String override = blankToNull(env.get("TCPX4J_CLASSPATH"));
        if (override != null) {
            List<String> missing = new ArrayList<>();
            for (String e : override.split(":")) {
                if (!e.isBlank() && !Files.exists(Path.of(e))) {
                    missing.add(e);
                }
            }
            return missing.isEmpty() ? Check.ok("classpath", "TCPX4J_CLASSPATH (overrides "
                    + NixlInstallCommand.CLASSPATH_FILE + ")")
                    : Check.fail("classpath", "TCPX4J_CLASSPATH names missing files: " + missing,
                    "unset TCPX4J_CLASSPATH to use " + dir.resolve(NixlInstallCommand.CLASSPATH_FILE), true);
        }
        Path file = dir.resolve(NixlInstallCommand.CLASSPATH_FILE);
        if (!Files.isRegularFile(file)) {
            return Check.fail("classpath", "no " + file + " and TCPX4J_CLASSPATH is unset",
                    installFix, true);
        }
        List<String> entries = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith("#")) {
                    continue;
                }
                for (String e : line.split(":")) {
                    String s = e.strip();
                    if (!s.isEmpty()) {
                        entries.add(s);
                        if (!Files.exists(dir.resolve(s))) {
                            missing.add(s);
                        }
                    }
                }
            }
        } catch (IOException e) {
            return Check.fail("classpath", "cannot read " + file + ": " + e.getMessage(), "check its permissions", true);
        }
        boolean backend = entries.stream().anyMatch(s -> s.contains("tcpx4j-nixl-backend"));
        if (!missing.isEmpty() || !backend) {
            return Check.fail("classpath", file + (missing.isEmpty() ? " lacks tcpx4j-nixl-backend"
                    : " names missing files: " + missing), installFix, true);
        }
        return Check.ok("classpath", entries.size() + " jars from " + file);
    }

    /** The Java runtime the bridge will load, in the bridge's order. */
    private Check java() {
        String[][] vars = {{"TCPX4J_JAVA_HOME", env.get("TCPX4J_JAVA_HOME")}, {"JAVA_HOME", env.get("JAVA_HOME")}};
        Path home = null;
        String from = null;
        for (String[] v : vars) {
            if (blankToNull(v[1]) != null) {
                home = Path.of(v[1]);
                from = v[0];
                break;
            }
        }
        if (home == null) {
            home = javaOnPath();
            from = "the java on PATH";
        }
        if (home == null) {
            return Check.fail("java", "no Java: TCPX4J_JAVA_HOME and JAVA_HOME are unset and no java is on PATH",
                    "install a Java 17+ runtime, or export JAVA_HOME=/path/to/jdk", true);
        }
        Path jvm = home.resolve("lib/server/libjvm.so");
        if (!Files.isRegularFile(jvm)) {
            return Check.fail("java", "no lib/server/libjvm.so under " + home + " (from " + from + ")",
                    "point TCPX4J_JAVA_HOME at a Java 17+ installation", true);
        }
        return Check.ok("java", jvm + " (from " + from + ")");
    }

    private Path javaOnPath() {
        String path = env.get("PATH");
        if (path == null) {
            return null;
        }
        for (String d : path.split(":")) {
            if (d.isEmpty()) {
                continue;
            }
            Path java = Path.of(d, "java");
            if (Files.isExecutable(java)) {
                try {
                    Path bin = java.toRealPath().getParent();
                    return bin != null && bin.getFileName().toString().equals("bin") ? bin.getParent() : null;
                } catch (IOException e) {
                    return null;
                }
            }
        }
        return null;
    }

    /** What ldd says about the plugin: every library it needs must resolve. */
    static Check ldd(Path plugin) {
        List<String> out = new ArrayList<>();
        try {
            Process p = new ProcessBuilder("ldd", plugin.toString()).redirectErrorStream(true).start();
            try (var r = p.inputReader()) {
                r.lines().forEach(out::add);
            }
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Check.warn("ldd", "ldd did not answer in 20 s", null);
            }
        } catch (IOException e) {
            return Check.info("ldd", "ldd not available: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Check.warn("ldd", "interrupted", null);
        }
        List<String> missing = out.stream().filter(l -> l.contains("not found")).map(String::strip).toList();
        if (!missing.isEmpty()) {
            return Check.fail("ldd", "unresolved: " + String.join("; ", missing),
                    "reinstall with ./tcpx4j nixl install (it sets the rpath), or add the directories to LD_LIBRARY_PATH",
                    true);
        }
        return Check.ok("ldd", "every library of " + NixlInstallCommand.PLUGIN + " resolves");
    }

    private static Check nixlOwnPlugins(Path nixlPlugins, Path searched) {
        TreeSet<String> lost = new TreeSet<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(nixlPlugins, "libplugin_*.so")) {
            for (Path p : ds) {
                if (!Files.exists(searched.resolve(p.getFileName()))) {
                    String n = p.getFileName().toString();
                    lost.add(n.substring("libplugin_".length(), n.length() - ".so".length()));
                }
            }
        } catch (IOException e) {
            return Check.info("nixl-plugins", "cannot list " + nixlPlugins + ": " + e.getMessage());
        }
        if (lost.isEmpty()) {
            return Check.ok("nixl-plugins", "NIXL's own plugins are reachable from " + searched);
        }
        return Check.warn("nixl-plugins", "with NIXL_PLUGIN_DIR=" + searched + " NIXL cannot load " + lost
                        + " (createBackend fails with 'unsupported backend')",
                "link them: ln -s " + nixlPlugins + "/libplugin_*.so " + searched + "/ (or install TCPX into "
                        + nixlPlugins + " and unset NIXL_PLUGIN_DIR)");
    }

    /** Prints checks the way {@code tcpx4j doctor} does. */
    static void print(Io io, List<Check> checks) {
        for (Check c : checks) {
            io.out().printf(Locale.ROOT, "  %-5s %-12s %s%n", c.status(), c.name(), c.detail());
            if (c.fix() != null && c.status() != Check.Status.OK && c.status() != Check.Status.INFO) {
                io.out().printf(Locale.ROOT, "  %-5s %-12s fix: %s%n", "", "", c.fix());
            }
        }
    }

    /**
     * {@code tcpx4j doctor --nixl}: prints the checks (or, with {@code json}, one JSON document); 0 if
     * nothing blocks, 1 otherwise.
     *
     * @param nixlPrefix --nixl-prefix, or null to search the default prefix and the loader path
     */
    static int report(Io io, Path nixlPrefix, Path pluginDir, boolean json) throws IOException {
        Path prefix = nixlPrefix == null ? null : nixlPrefix.toAbsolutePath().normalize();
        NixlDoctor doctor = new NixlDoctor(io.env(), prefix,
                pluginDir == null ? null : pluginDir.toAbsolutePath().normalize());
        List<Check> checks = doctor.run();
        long blocking = checks.stream().filter(Check::blocks).count();
        if (json) {
            var subject = new java.util.LinkedHashMap<String, Object>();
            subject.put("nixl", true);
            subject.put("nixlPrefix", prefix == null ? null : prefix.toString());
            subject.put("pluginDir", pluginDir == null ? null : pluginDir.toString());
            return DoctorJson.print(io, subject, checks);
        }
        io.out().println("tcpx4j doctor: --nixl (" + (prefix != null ? "NIXL at " + prefix
                : "NIXL at " + DEFAULT_PREFIX + " or on the loader path") + ")");
        print(io, checks);
        io.out().println(blocking > 0 ? "result: " + blocking + " problem(s) keep NIXL from loading TCPX; fix them and"
                + " run tcpx4j doctor --nixl again" : "result: NIXL agents can load the TCPX backend");
        io.out().flush();
        return blocking > 0 ? 1 : 0;
    }

    private static boolean same(Path a, Path b) {
        try {
            return Files.isSameFile(a, b);
        } catch (IOException e) {
            return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
