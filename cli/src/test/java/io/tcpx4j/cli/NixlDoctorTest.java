package io.tcpx4j.cli;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code doctor --nixl} and the install's file layout, on a NIXL installation laid out in a temporary directory. */
class NixlDoctorTest {

    @TempDir
    Path tmp;

    Path prefix;
    Path nixlPlugins;
    Path java;

    @BeforeEach
    void layout() throws IOException {
        prefix = tmp.resolve("nixl");
        Path lib = Files.createDirectories(prefix.resolve("lib/x86_64-linux-gnu"));
        Files.createFile(lib.resolve("libnixl.so"));
        nixlPlugins = Files.createDirectories(lib.resolve("plugins"));
        Files.createFile(nixlPlugins.resolve("libplugin_UCX.so"));
        Files.createFile(nixlPlugins.resolve("libplugin_POSIX.so"));
        java = tmp.resolve("jdk");
        Files.createDirectories(java.resolve("lib/server"));
        Files.createFile(java.resolve("lib/server/libjvm.so"));
    }

    /** What tcpx4j nixl install leaves in {@code dir}; the plugin files are empty stand-ins. */
    private static void install(Path dir) throws IOException {
        Files.createDirectories(dir.resolve(NixlInstallCommand.JAR_DIR));
        Files.createFile(dir.resolve(NixlInstallCommand.PLUGIN));
        Files.createFile(dir.resolve(NixlInstallCommand.BRIDGE));
        for (String jar : List.of("tcpx4j-nixl-backend-1.jar", "guice-7.jar")) {
            Files.createFile(dir.resolve(NixlInstallCommand.JAR_DIR).resolve(jar));
        }
        Files.writeString(dir.resolve(NixlInstallCommand.CLASSPATH_FILE),
                "# comment\ntcpx4j/tcpx4j-nixl-backend-1.jar\ntcpx4j/guice-7.jar\n");
    }

    private Map<String, String> env(String... kv) {
        Map<String, String> env = new HashMap<>(Map.of("JAVA_HOME", java.toString(), "PATH", "/nonexistent"));
        for (int i = 0; i < kv.length; i += 2) {
            env.put(kv[i], kv[i + 1]);
        }
        return env;
    }

    private static Check find(List<Check> checks, String name) {
        return checks.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no check " + name + " in " + checks));
    }

    @Test
    void anInstallationInNixlsOwnPluginDirectoryNeedsNoEnvironment() throws IOException {
        install(nixlPlugins);

        List<Check> checks = new NixlDoctor(env(), prefix, null).run();

        assertThat(checks).noneMatch(Check::blocks);
        assertThat(find(checks, "classpath").detail()).startsWith("2 jars from");
        assertThat(find(checks, "java").detail()).contains("libjvm.so").contains("from JAVA_HOME");
        assertThat(checks).noneMatch(c -> c.name().equals("nixl-plugins"));
    }

    @Test
    void aMissingJarIsNamedWithTheInstallCommandAsFix() throws IOException {
        install(nixlPlugins);
        Files.delete(nixlPlugins.resolve("tcpx4j/guice-7.jar"));

        Check c = find(new NixlDoctor(env(), prefix, null).run(), "classpath");

        assertThat(c.blocks()).isTrue();
        assertThat(c.detail()).contains("tcpx4j/guice-7.jar");
        assertThat(c.fix()).contains("tcpx4j nixl install");
    }

    @Test
    void pluginDirReplacesNixlsDirectoryAndHidesItsPlugins() throws IOException {
        Path other = Files.createDirectories(tmp.resolve("tcpx-plugins"));
        install(other);

        List<Check> withoutVar = new NixlDoctor(env(), prefix, other).run();
        assertThat(find(withoutVar, "plugin-dir").blocks()).isTrue();
        assertThat(find(withoutVar, "plugin-dir").fix()).contains("NIXL_PLUGIN_DIR=" + other);

        List<Check> withVar = new NixlDoctor(env("NIXL_PLUGIN_DIR", other.toString()), prefix, other).run();
        assertThat(withVar).noneMatch(Check::blocks);
        Check lost = find(withVar, "nixl-plugins");
        assertThat(lost.status()).isEqualTo(Check.Status.WARN);
        assertThat(lost.detail()).contains("POSIX").contains("UCX");

        assertThat(NixlInstallCommand.linkNixlPlugins(nixlPlugins, other)).isEqualTo(2);
        assertThat(Files.isSymbolicLink(other.resolve("libplugin_UCX.so"))).isTrue();
        assertThat(find(new NixlDoctor(env("NIXL_PLUGIN_DIR", other.toString()), prefix, other).run(), "nixl-plugins")
                .status()).isEqualTo(Check.Status.OK);
    }

    @Test
    void noJavaAnywhereBlocks() throws IOException {
        install(nixlPlugins);
        Map<String, String> env = Map.of("PATH", "/nonexistent");

        Check c = find(new NixlDoctor(env, prefix, null).run(), "java");

        assertThat(c.blocks()).isTrue();
        assertThat(c.fix()).contains("JAVA_HOME");
    }

    @Test
    void noPluginSaysHowToInstall() {
        Cli.Result r = Cli.run(env(), "doctor", "--nixl", "--nixl-prefix", prefix.toString());

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.out()).contains("no libplugin_TCPX.so in " + nixlPlugins).contains("tcpx4j nixl install");
    }

    @Test
    void aStrayPluginDirVariableIsNamedAsTheProblem() throws IOException {
        install(nixlPlugins);
        Path empty = Files.createDirectories(tmp.resolve("empty"));

        Check c = find(new NixlDoctor(env("NIXL_PLUGIN_DIR", empty.toString()), prefix, null).run(), "plugin");

        assertThat(c.blocks()).isTrue();
        assertThat(c.fix()).startsWith("unset NIXL_PLUGIN_DIR");
    }

    @Test
    void installWithoutNixlIsABadFlagOnOneLine() {
        Cli.Result r = Cli.run(env(), "nixl", "install", "--nixl-prefix", tmp.resolve("none").toString(),
                "--source", tmp.toString());

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).contains("no NIXL installation under").contains("--nixl-prefix");
    }

    @Test
    void withoutAPrefixNixlIsFoundOnTheLoaderPath() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(NixlDoctor.findLibnixl(NixlDoctor.DEFAULT_PREFIX) == null,
                "a NIXL at the default prefix is found before the loader path");
        install(nixlPlugins);
        Path lib = prefix.resolve("lib/x86_64-linux-gnu");

        List<Check> viaEnv = new NixlDoctor(env("LD_LIBRARY_PATH", "/nonexistent:" + lib), null, null, List::of).run();
        assertThat(viaEnv).noneMatch(Check::blocks);
        assertThat(find(viaEnv, "nixl").detail()).startsWith("NIXL at " + prefix + " (" + lib.resolve("libnixl.so"));

        List<String> cache = List.of("123 libs found in cache `/etc/ld.so.cache'",
                "\tlibnixl.so (libc6,x86-64) => " + lib.resolve("libnixl.so"));
        List<Check> viaCache = new NixlDoctor(env(), null, null, () -> cache).run();
        assertThat(viaCache).noneMatch(Check::blocks);
        assertThat(find(viaCache, "plugin").detail()).isEqualTo(nixlPlugins.resolve(NixlInstallCommand.PLUGIN).toString());
    }

    @Test
    void aMissingNixlSaysWhereItWasLookedFor() {
        org.junit.jupiter.api.Assumptions.assumeTrue(NixlDoctor.findLibnixl(NixlDoctor.DEFAULT_PREFIX) == null,
                "a NIXL at the default prefix is found before the loader path");
        Path wrong = tmp.resolve("wrong");
        Check given = find(new NixlDoctor(env(), wrong, null, List::of).run(), "nixl");
        assertThat(given.blocks()).isTrue();
        assertThat(given.detail()).isEqualTo("no libnixl.so under --nixl-prefix " + wrong + " (looked in "
                + wrong.resolve("lib/x86_64-linux-gnu") + ", " + wrong.resolve("lib64") + ", " + wrong.resolve("lib") + ")");

        Check searched = find(new NixlDoctor(env("LD_LIBRARY_PATH", "/nonexistent"), null, null, List::of).run(), "nixl");
        assertThat(searched.blocks()).isTrue();
        assertThat(searched.detail()).contains("/opt/nvidia/nvda_nixl/lib64")
                .contains("on LD_LIBRARY_PATH (/nonexistent) or in the ldconfig cache");
    }

    @Test
    void doctorNixlJsonIsOneJsonDocument() throws IOException {
        install(nixlPlugins);
        Cli.Result r = Cli.run(env(), "doctor", "--nixl", "--nixl-prefix", prefix.toString(), "--json");

        assertThat(r.exit()).as(r.err()).isZero();
        var doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
        assertThat(doc.get("ready").asBoolean()).isTrue();
        assertThat(doc.get("nixlPrefix").asText()).isEqualTo(prefix.toString());
        assertThat(doc.get("checks").get(0).get("name").asText()).isEqualTo("nixl");
    }

    @Test
    void nixlFlagsWithoutNixlAreRefusedInOneLine() {
        for (String flag : List.of("--nixl-prefix", "--plugin-dir")) {
            Cli.Result r = Cli.run(env(), "doctor", flag, prefix.toString());
            assertThat(r.exit()).isEqualTo(2);
            assertThat(r.errLines()).containsExactly("tcpx4j: " + flag
                    + " is for checking a NIXL installation: add --nixl (see 'tcpx4j doctor --help')");
            assertThat(r.out()).isEmpty();
        }
    }
}
