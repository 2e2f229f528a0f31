package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** serve and the two-host roles on 127.0.0.1, both sides in this JVM. */
@Timeout(120)
class TwoHostTest {

    private static final java.time.Duration T = java.time.Duration.ofSeconds(10);
    private static final java.time.Duration P = java.time.Duration.ofSeconds(1);

    /** A serve command started on a thread, stopped the way SIGINT stops it. */
    static final class Served implements AutoCloseable {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final ServeCommand serve;
        final CompletableFuture<Integer> exit;

        Served(String... flags) throws InterruptedException {
            CommandLine cl = Main.commandLine(Cli.io(out, err, Map.of()));
            serve = cl.getSubcommands().get("serve").getCommand();
            serve.installSignalHandlers = false;
            String[] args = new String[flags.length + 3];
            args[0] = "serve";
            args[1] = "--listen";
            args[2] = "127.0.0.1:0";
            System.arraycopy(flags, 0, args, 3, flags.length);
            exit = CompletableFuture.supplyAsync(() -> cl.execute(args));
            assertThat(serve.awaitReady(30, TimeUnit.SECONDS)).isTrue();
            assertThat(serve.address()).as(err.toString(StandardCharsets.UTF_8)).isNotNull();
        }

        String peer() {
            return serve.address().toString();
        }

        @Override
        public void close() throws Exception {
            serve.shutdown();
            exit.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aPipelinedRunOfSeveralThreadsChecksEveryByteAndReportsTheChannelsTheTargetAgreedOn() throws Exception {
        try (Served s = new Served("--chunk-size", "64K", "--channels", "1")) {
            for (String op : new String[] {"write", "read"}) {
                Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--op", op,
                        "--block-sizes", "4K,256K", "--batch-sizes", "2", "--iterations", "12", "--warmup", "1",
                        "--warmup-seconds", "0", "--num-threads", "2", "--pipeline-depth", "3", "--channels", "8",
                        "--check-consistency", "--no-baseline", "--json");
                assertThat(r.exit()).as(r.err()).isZero();
                JsonNode doc = new ObjectMapper().readTree(r.out());
                assertThat(doc.get("settings").get("channels").asInt()).as("the target offers one").isEqualTo(1);
                assertThat(doc.get("settings").get("channelsRequested").asInt()).isEqualTo(8);
                assertThat(doc.get("mismatches").asLong()).isZero();
                for (JsonNode row : doc.get("rows")) {
                    assertThat(row.get("iterations").asInt()).isEqualTo(12);
                    assertThat(row.get("mismatches").asLong()).isZero();
                }
            }
            Cli.Result table = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--block-sizes", "4K",
                    "--iterations", "2", "--warmup-seconds", "0", "--no-baseline", "--channels", "4");
            assertThat(table.exit()).as(table.err()).isZero();
            assertThat(table.out().lines().findFirst().orElseThrow()).contains("1 channel (4 asked)");
        }
    }

    @Test
    void serveAnswersSeveralInitiatorRunsThenStopsCleanly() throws Exception { // a target of three agents
        Served s = new Served("--chunk-size", "64K", "--agents", "3");
        HostPort at = s.serve.address();
        for (String op : new String[] {"write", "read"}) {
            Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--op", op, "--block-sizes", "4K,256K",
                    "--batch-sizes", "1,2", "--iterations", "3", "--warmup", "1", "--check-consistency", "--json");
            assertThat(r.exit()).as(r.err()).isZero();
            JsonNode doc = new ObjectMapper().readTree(r.out());
            assertThat(doc.get("settings").get("mode").asText()).isEqualTo("initiator");
            assertThat(doc.get("settings").get("peer").asText()).isEqualTo(s.peer());
            assertThat(doc.get("rows").size()).isEqualTo(4);
            assertThat(doc.get("mismatches").asLong()).isZero();
            // the raw baseline runs to readers the target opened
            for (JsonNode row : doc.get("rows")) {
                assertThat(row.get("rawAvgLatencyUs").asDouble()).isPositive();
                assertThat(row.get("xRaw").asDouble()).isPositive();
            }
        }
        s.serve.shutdown();
        assertThat(s.exit.get(30, TimeUnit.SECONDS)).isZero();
        assertThat(s.out.toString(StandardCharsets.UTF_8)).contains("tcpx4j serve: loopback target on 127.0.0.1:");
        assertThat(s.out.toString(StandardCharsets.UTF_8)).contains(", 3 progress agents); Ctrl-C stops");
        assertThat(s.err.toString(StandardCharsets.UTF_8)).contains("stopped after 2 run(s)");
        // the out-of-band port is closed
        assertThatThrownBy(() -> {
            try (Socket sock = new Socket()) {
                sock.connect(new InetSocketAddress(at.host(), at.port()), 2000);
            }
        }).isInstanceOf(IOException.class);
    }

    @Test
    void aTargetCorruptionIsReportedToTheInitiator() throws Exception {
        try (Served s = new Served()) {
            Patterns.beforeVerify = (address, length) -> io.tcpx4j.domain.memory.NativeMemory.putByte(address + length - 1,
                    (byte) ~io.tcpx4j.domain.memory.NativeMemory.getByte(address + length - 1));
            try {
                Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--block-sizes", "8K",
                        "--iterations", "2", "--warmup", "0", "--check-consistency");
                assertThat(r.exit()).as(r.err()).isEqualTo(BenchCommand.EXIT_MISMATCH);
                assertThat(r.err()).contains("1 destination bytes differ");
            } finally {
                Patterns.beforeVerify = null;
            }
        }
    }

    @Test
    void benchTargetServesOneRunAndExits() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        String listen = "127.0.0.1:" + port;
        CompletableFuture<Integer> target = CompletableFuture.supplyAsync(() -> Main.run(
                new String[] {"bench", "--role", "target", "--listen", listen}, Cli.io(out, err, Map.of())));
        // the initiator retries until the target listens
        Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", listen, "--block-sizes", "64K",
                "--iterations", "4", "--warmup", "1");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("(initiator -> " + listen + ")").contains("65536 ");
        assertThat(target.get(30, TimeUnit.SECONDS)).as(err.toString(StandardCharsets.UTF_8)).isZero();
    }

    @Test
    void aMismatchedOrMalformedHelloIsRefusedWithItsReason() throws Exception {
        try (Served s = new Served()) {
            try (OobChannel c = OobChannel.connect(s.serve.address(), java.time.Duration.ofSeconds(5), null)) {
                assertThatThrownBy(() -> OobClient.open(c, "x", new byte[] {1}, 4096, "dram", "tcpx", T, P, null))
                        .hasMessageContaining("this target runs --transport loopback, the initiator --transport tcpx");
            }
            try (OobChannel c = OobChannel.connect(s.serve.address(), java.time.Duration.ofSeconds(5), null)) {
                assertThatThrownBy(() -> OobClient.open(c, "x", new byte[] {1}, TargetServer.MAX_BUFFER + 1, "dram", "loopback", T, P, null))
                        .hasMessageContaining("buffer of");
            }
            try (OobChannel c = OobChannel.connect(s.serve.address(), java.time.Duration.ofSeconds(5), null)) {
                assertThatThrownBy(() -> c.call(OobMessage.ok(), "welcome", T)).hasMessageContaining("expected hello");
            }
            // the server is still serving
            Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--block-sizes", "4K",
                    "--iterations", "2", "--warmup", "0");
            assertThat(r.exit()).as(r.err()).isZero();
        }
    }

    @Test
    void anInitiatorWithoutATargetFailsWithExitOne() {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", "127.0.0.1:" + port, "--peer-wait", "1",
                "--block-sizes", "4K");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("no bench target at 127.0.0.1:" + port + " yet")
                .contains("retrying for up to 1 s (--peer-wait)");
        assertThat(r.errLines()).hasSize(2);
        assertThat(r.errLines()[1]).contains("no bench target at 127.0.0.1:" + port + " (");
    }
}
