package io.tcpx4j.cli;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tcpx4j nixl install} up to its first native step, against a NIXL installation and a source
 * tree laid out in a temporary directory; the source tree's mvnw is a script that records what it got.
 */
class NixlInstallTest {

    @TempDir
    Path tmp;

    Path prefix;
    Path source;
    Path jdk;

    @BeforeEach
    void layout() throws IOException {
        prefix = tmp.resolve("nixl");
        Files.createDirectories(prefix.resolve("include/backend"));
        Files.createFile(prefix.resolve("include/backend/backend_plugin.h"));
        Files.createDirectories(prefix.resolve("lib/x86_64-linux-gnu/plugins"));
        Files.createFile(prefix.resolve("lib/x86_64-linux-gnu/libnixl.so"));
        jdk = tmp.resolve("jdk");
        Files.createDirectories(jdk.resolve("include"));
        Files.createFile(jdk.resolve("include/jni.h"));
        source = Files.createDirectories(tmp.resolve("src"));
    }

    private void mvnw(String script) throws IOException {
        Path mvnw = source.resolve("mvnw");
        Files.writeString(mvnw, "#!/bin/sh\n" + script);
        Files.setPosixFilePermissions(mvnw, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private Cli.Result install(Map<String, String> env, String... more) {
        String[] args = {"nixl", "install", "--nixl-prefix", prefix.toString(), "--source", source.toString(),
                "--java-home", jdk.toString(), "--plugin-dir", tmp.resolve("plugins").toString()};
        String[] all = java.util.Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return Cli.run(env, all);
    }

    @Test
    void theLaunchersLibjsigPreloadStaysOutOfTheBuild() throws IOException {
        mvnw("env > child-env.txt\nexit 3\n");
        Cli.Result r = install(Map.of("PATH", System.getenv("PATH"),
                "LD_PRELOAD", "/usr/lib/jvm/x/lib/libjsig.so:/opt/other/libkeep.so"));

        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        String env = Files.readString(source.resolve("child-env.txt"));
        assertThat(env).contains("LD_PRELOAD=/opt/other/libkeep.so").doesNotContain("libjsig");
        assertThat(env).contains("JAVA_HOME=" + jdk);

        assertThat(NixlInstallCommand.childEnvironment(Map.of("LD_PRELOAD", "/j/lib/libjsig.so", "A", "b")))
                .isEqualTo(Map.of("A", "b"));
    }

    @Test
    void examplesAnEarlierInstallBuiltAreBuiltAgain() throws IOException {
        // the Java side "builds": each module's jar and an empty runtime class path
        mvnw("for m in " + String.join(" ", NixlInstallCommand.MODULES) + "; do mkdir -p $m/target;"
                + " touch $m/target/tcpx4j-$m-1.jar; : > $m/target/runtime-classpath.txt; done\n");
        Path build = Files.createDirectories(source.resolve("nixl-backend/target/nixl-plugin-build"));
        Files.createFile(build.resolve("tcpx_two_agents"));

        // without meson the install stops at meson setup, after logging its command line; with it, meson
        // fails on the empty source tree, after the same line
        Cli.Result r = install(Map.of("PATH", System.getenv("PATH")));

        assertThat(r.out()).contains("also building the examples again");
        String log = Files.readString(source.resolve("nixl-backend/target/nixl-install.log"));
        assertThat(log).containsPattern("\\$ meson setup .* -Dexamples=true");
    }
}
