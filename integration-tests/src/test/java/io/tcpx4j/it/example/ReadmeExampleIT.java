package io.tcpx4j.it.example;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.transport.loopback.LoopbackTransport;
import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The examples of README.md's "Using the library" section, compiled and run. The first is
 * {@link ReadmeExample} (its tagged region the section's second code block, its imports the first): an
 * application that holds nothing but {@code io.tcpx4j.api} types and a transport, built by the api's plain
 * factory. The third and fourth blocks are {@link ReadmeGuiceExampleIT}'s, the same with Guice. A test here
 * keeps README and files equal.
 */
@Timeout(120)
class ReadmeExampleIT {

    private static final String PLAIN = "src/test/java/io/tcpx4j/it/example/ReadmeExample.java";
    private static final String GUICE = "src/test/java/io/tcpx4j/it/example/ReadmeGuiceExampleIT.java";

    @Test
    void theExampleWritesHostMemoryIntoAnotherEngineAndNotifiesItsListener() throws Exception {
        ReadmeExample.Outcome o = ReadmeExample.run();
        assertThat(o.note()).isEqualTo(new Notification("prefill-0", "layer-7".getBytes(StandardCharsets.UTF_8)));
        assertThat(o.queuedBesides()).as("the listener's notification is not also queued").isEmpty();
        assertThat(new String(o.landed(), StandardCharsets.UTF_8)).isEqualTo("KV-cache blocks of layer 7");
    }

    /**
     * The example in a JVM of its own whose class path is what an application that adds only the loopback
     * transport needs: the api, the engine (tcpx4j-domain, which the transport brings), the transport and
     * Agrona. No Guice, no inject module, no test library.
     */
    @Test
    void theExampleRunsWithTheApiTheEngineAndTheTransportAlone() throws Exception {
        List<String> classPath = new ArrayList<>();
        for (Class<?> of : List.of(TransferEngine.class, Engine.class, LoopbackTransport.class, DirectBuffer.class,
                ReadmeExample.class)) {
            classPath.add(location(of));
        }
        assertThat(classPath).doesNotHaveDuplicates().noneMatch(e -> e.contains("guice"));
        String java = ProcessHandle.current().info().command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        Process p = new ProcessBuilder(java, "-Xmx128m", "-cp", String.join(File.pathSeparator, classPath),
                ReadmeExample.class.getName()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the example's JVM ended").isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).as(output).contains("landed 'KV-cache blocks of layer 7', notified by prefill-0 with "
                + "'layer-7', 0 queued besides");
    }

    /** The jar or directory {@code c} was loaded from. */
    private static String location(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    @Test
    void theReadmeShowsBothExamplesVerbatim() throws IOException {
        String plain = Files.readString(Path.of(PLAIN));
        String guice = Files.readString(Path.of(GUICE));
        String readme = Files.readString(Path.of("..", "README.md"));
        int from = readme.indexOf("## Using the library");
        assertThat(from).as("README.md has a 'Using the library' section").isNotNegative();
        int to = readme.indexOf("\n## ", from + 1);
        Matcher block = Pattern.compile("```java\\R(.*?)```", Pattern.DOTALL)
                .matcher(readme.substring(from, to < 0 ? readme.length() : to));
        List<String> blocks = new ArrayList<>();
        while (block.find()) {
            blocks.add(block.group(1));
        }
        assertThat(blocks).as("the section's java blocks: imports and example, twice").hasSize(4);
        assertThat(blocks.get(1)).isEqualTo(region(plain));
        assertThat(lines(blocks.get(0))).isEqualTo(imports(plain));
        assertThat(blocks.get(3)).isEqualTo(region(guice));
        assertThat(lines(blocks.get(2))).isEqualTo(imports(guice));
    }

    @Test
    void theFirstExampleImportsOnlyTheApiTheTransportAndTheJdk() throws IOException {
        Set<String> used = imports(Files.readString(Path.of(PLAIN)));
        assertThat(used).isNotEmpty().allSatisfy(line -> assertThat(line).matches(
                "import (io\\.tcpx4j\\.api\\.\\w+|io\\.tcpx4j\\.transport\\.loopback\\.\\w+|java\\.[\\w.]+);"));
        assertThat(used).contains("import io.tcpx4j.api.TransferEngines;");
    }

    /** Imports of these tests that the examples themselves do not need. */
    private static final Pattern TEST_ONLY = Pattern.compile(
            "org\\.junit|org\\.assertj|java\\.io\\.IOException|java\\.nio\\.file\\.|java\\.util\\.regex\\."
                    + "|java\\.util\\.(ArrayList|Set|TreeSet);");

    /** A source file's imports, less the tests' own. */
    private static Set<String> imports(String source) {
        Set<String> used = new TreeSet<>();
        for (String line : source.lines().toList()) {
            if (line.startsWith("import ") && !line.startsWith("import static ") && !TEST_ONLY.matcher(line).find()) {
                used.add(line);
            }
        }
        return used;
    }

    private static Set<String> lines(String block) {
        return new TreeSet<>(block.lines().toList());
    }

    /** The lines between the tag::readme and end::readme markers, markers excluded, indentation removed. */
    static String region(String source) {
        StringBuilder b = new StringBuilder();
        boolean in = false;
        int indent = -1;
        for (String line : source.split("\\R")) {
            String t = line.strip();
            if (t.equals("// tag::readme[]")) {
                in = true;
                if (indent < 0) {
                    indent = line.indexOf('/');
                }
                continue;
            }
            if (t.equals("// end::readme[]")) {
                in = false;
                continue;
            }
            if (in) {
                b.append(line.length() > indent ? line.substring(indent) : line.strip()).append('\n');
            }
        }
        return b.toString();
    }
}
