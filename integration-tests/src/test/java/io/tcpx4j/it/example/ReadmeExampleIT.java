package io.tcpx4j.it.example;

import com.google.inject.Guice;
import io.tcpx4j.api.HostBuffer;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.inject.EngineLifecycle;
import io.tcpx4j.inject.EngineModule;
import io.tcpx4j.transport.loopback.LoopbackTransportModule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example of README.md's "Using the library" section, compiled and run: the README's second code
 * block is the region between the {@code tag::readme} markers below, its first block the imports
 * this example needs, and a second test keeps README and file equal.
 */
@Timeout(60)
class ReadmeExampleIT {

    @Test
    void theExampleWritesHostMemoryIntoAnotherEngineAndNotifies() throws Exception {
        byte[] checked;
        // tag::readme[]
        // Two engines over the loopback transport (kernel TCP, any machine). On A3 hosts install
        // TcpxTransportModule instead, plus CudaUnpackModule for GPU memory (MemoryDescriptor.vram).
        try (EngineLifecycle prefillNode = Guice.createInjector(
                     new EngineModule(EngineConfig.defaults("prefill-0")), new LoopbackTransportModule())
                     .getInstance(EngineLifecycle.class);
             EngineLifecycle decodeNode = Guice.createInjector(
                     new EngineModule(EngineConfig.defaults("decode-0")), new LoopbackTransportModule())
                     .getInstance(EngineLifecycle.class)) {
            TransferEngine prefill = prefillNode.start();
            TransferEngine decode = decodeNode.start();

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

                // On the target, the notification means every byte is in place.
                List<Notification> notes = decode.drainNotifications();
                for (long end = System.nanoTime() + 10_000_000_000L; notes.isEmpty() && System.nanoTime() < end; ) {
                    Thread.sleep(1);
                    notes = decode.drainNotifications();
                }
                byte[] landed = new byte[kv.length];
                destination.get(4096, landed);
                if (notes.size() != 1 || !Arrays.equals(landed, kv)) {
                    throw new IllegalStateException("notifications " + notes + ", bytes " + Arrays.toString(landed));
                }
                // end::readme[]
                assertThat(notes.get(0).agent()).isEqualTo("prefill-0");
                assertThat(new String(notes.get(0).message(), StandardCharsets.UTF_8)).isEqualTo("layer-7");
                checked = landed;
                // tag::readme[]
            }
        }
        // end::readme[]
        assertThat(new String(checked, StandardCharsets.UTF_8)).isEqualTo("KV-cache blocks of layer 7");
    }

    @Test
    void theReadmeShowsThisExampleVerbatim() throws IOException {
        String source = Files.readString(Path.of("src/test/java/io/tcpx4j/it/example/ReadmeExampleIT.java"));
        String readme = Files.readString(Path.of("..", "README.md"));
        int from = readme.indexOf("## Using the library");
        assertThat(from).as("README.md has a 'Using the library' section").isNotNegative();
        int to = readme.indexOf("\n## ", from + 1);
        Matcher block = Pattern.compile("```java\\R(.*?)```", Pattern.DOTALL)
                .matcher(readme.substring(from, to < 0 ? readme.length() : to));
        List<String> blocks = new java.util.ArrayList<>();
        while (block.find()) {
            blocks.add(block.group(1));
        }
        assertThat(blocks).as("the section's java blocks: imports, then the example").hasSize(2);
        assertThat(blocks.get(1)).isEqualTo(region(source));
        // the imports shown are exactly the example's (this file's, less the test's own)
        java.util.Set<String> shown = new java.util.TreeSet<>(blocks.get(0).lines().toList());
        java.util.Set<String> used = new java.util.TreeSet<>();
        for (String line : source.lines().toList()) {
            if (line.startsWith("import ") && !line.startsWith("import static ") && !TEST_ONLY.matcher(line).find()) {
                used.add(line);
            }
        }
        assertThat(shown).isEqualTo(used);
    }

    /** Imports of this test that the example itself does not need. */
    private static final Pattern TEST_ONLY = Pattern.compile(
            "org\\.junit|org\\.assertj|java\\.io\\.IOException|java\\.nio\\.file\\.|java\\.util\\.regex\\.");

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
