package io.tcpx4j.it.example;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.HostBuffer;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferEngines;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The examples of README.md's "Using the library" section, compiled and run. This file's region between the
 * {@code tag::readme} markers is the section's second code block and its imports the first: an application
 * that holds nothing but {@code io.tcpx4j.api} types, a transport and the plain factory. The third and
 * fourth blocks are {@link ReadmeGuiceExampleIT}'s, the same with Guice. A test here keeps README and files
 * equal.
 */
@Timeout(60)
class ReadmeExampleIT {

    @Test
    void theExampleWritesHostMemoryIntoAnotherEngineAndNotifiesItsListener() throws Exception {
        byte[] checked;
        // tag::readme[]
        // Two engines over the loopback transport (kernel TCP, any machine). On A3 hosts pass a TcpxTransport
        // instead, and for GPU memory (MemoryDescriptor.vram) cuda-unpack's CudaDeviceMemory and
        // CudaScatterGather to TransferEngines.create(config, transport, memory, scatterGather).
        try (TransferEngine prefill = TransferEngines.create(EngineConfig.defaults("prefill-0"),
                     new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false)));
             TransferEngine decode = TransferEngines.create(EngineConfig.defaults("decode-0"),
                     new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false)))) {
            // On the target, a notification means every byte of its transfer is in place.
            BlockingQueue<Notification> notes = new LinkedBlockingQueue<>();
            decode.onNotification(notes::add);

            try (HostBuffer source = HostBuffer.allocate(1 << 20);
                 HostBuffer destination = HostBuffer.allocate(1 << 20);
                 RegisteredMemory sourceReg = prefill.register(source.descriptor());
                 RegisteredMemory destinationReg = decode.register(destination.descriptor())) {
                // Normally sent between processes out of band: conn-info and region metadata.
                prefill.loadPeer("decode-0", decode.connInfo());
                prefill.loadRemoteMetadata("decode-0", destinationReg.publicMetadata());

                byte[] kv = "KV-cache blocks of layer 7".getBytes(StandardCharsets.UTF_8);
                source.put(0, kv);
                Transfer t = prefill.session("decode-0").write(
                        List.of(source.descriptor().slice(0, kv.length)),
                        List.of(destination.descriptor().slice(4096, kv.length)),
                        "layer-7".getBytes(StandardCharsets.UTF_8));
                if (t.await(Duration.ofSeconds(10)) != TransferStatus.DONE) {
                    throw t.error().orElseThrow(() -> new IllegalStateException("write timed out"));
                }

                Notification note = notes.poll(10, TimeUnit.SECONDS);
                byte[] landed = new byte[kv.length];
                destination.get(4096, landed);
                if (note == null || !Arrays.equals(landed, kv)) {
                    throw new IllegalStateException("notification " + note + ", bytes " + Arrays.toString(landed));
                }
                // end::readme[]
                assertThat(note).isEqualTo(new Notification("prefill-0", "layer-7".getBytes(StandardCharsets.UTF_8)));
                assertThat(decode.drainNotifications()).as("the listener's notification is not also queued").isEmpty();
                checked = landed;
                // tag::readme[]
            }
        }
        // end::readme[]
        assertThat(new String(checked, StandardCharsets.UTF_8)).isEqualTo("KV-cache blocks of layer 7");
    }

    @Test
    void theReadmeShowsBothExamplesVerbatim() throws IOException {
        String plain = Files.readString(Path.of("src/test/java/io/tcpx4j/it/example/ReadmeExampleIT.java"));
        String guice = Files.readString(Path.of("src/test/java/io/tcpx4j/it/example/ReadmeGuiceExampleIT.java"));
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
        Set<String> used = imports(Files.readString(Path.of("src/test/java/io/tcpx4j/it/example/ReadmeExampleIT.java")));
        assertThat(used).isNotEmpty().allSatisfy(line -> assertThat(line).matches(
                "import (io\\.tcpx4j\\.api\\.\\w+|io\\.tcpx4j\\.transport\\.loopback\\.\\w+|java\\.[\\w.]+);"));
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
