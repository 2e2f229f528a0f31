package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The out-of-band protocol against clients and targets that misbehave: silent, slow (one byte at a
 * time), vanishing or frozen. Real sockets on 127.0.0.1; deadlines of a second or less.
 */
@Timeout(60)
class OobDeadlineTest {

    private static final Duration T = Duration.ofSeconds(10);
    private static final Duration P = Duration.ofMillis(200);

    /** A short run: two iterations of one 4 KiB row, no warm-up. */
    private static Cli.Result quickRun(String peer, String... more) {
        String[] base = {"bench", "--role", "initiator", "--peer", peer, "--block-sizes", "4K", "--iterations", "2",
                "--warmup", "0", "--warmup-seconds", "0"};
        String[] all = new String[base.length + more.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return Cli.run(all);
    }

    /** An engine on 127.0.0.1 over the loopback transport, host memory. */
    private static Node engine(String name) {
        return Node.start(EngineConfig.defaults(name).withListen("127.0.0.1", 0),
                new Backends.Spec(TransportKind.LOOPBACK, MemoryKind.DRAM, "127.0.0.1"));
    }

    /** A hello and the welcome, then nothing: no pings, as from a stopped process. */
    private static void helloThenSilence(OobChannel c, Node n) throws IOException {
        c.send(OobMessage.hello(n.engine().name(), n.engine().connInfo(), 4096, "dram", "loopback", T));
        c.expect("hello", "welcome", T, null);
    }

    /** Reads until EOF; returns how long that took. Fails if the server keeps the socket open 10 s. */
    private static long millisUntilClosed(Socket s) throws IOException {
        long t0 = System.nanoTime();
        s.setSoTimeout(10_000);
        InputStream in = s.getInputStream();
        try {
            while (in.read() >= 0) {
                // an error line may come first
            }
        } catch (java.net.SocketException reset) {
            // closed by the server while we wrote: same outcome
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    private static String err(TwoHostTest.Served s) {
        return s.err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aSilentClientIsDroppedAndNeverHoldsUpARun() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served("--hello-timeout", "500ms");
             Socket silent = new Socket(s.serve.address().host(), s.serve.address().port())) {
            Cli.Result r = quickRun(s.peer());
            assertThat(r.exit()).as(r.err()).isZero();
            millisUntilClosed(silent);
            assertThat(err(s)).contains("dropped " + silent.getLocalSocketAddress()
                    + ": no complete hello within 500 ms");
        }
    }

    @Test
    void aSlowLorisClientIsDroppedAtTheHelloDeadline() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served("--hello-timeout", "500ms");
             Socket slow = new Socket(s.serve.address().host(), s.serve.address().port())) {
            byte[] hello = "{\"op\":\"hello\",\"version\":2,\"name\":\"slow\",\"connInfo\":\"AQ==\",\"bytes\":4096}\n"
                    .getBytes(StandardCharsets.UTF_8);
            CompletableFuture<Integer> sent = CompletableFuture.supplyAsync(() -> {
                int n = 0;
                try {
                    OutputStream out = slow.getOutputStream();
                    for (byte b : hello) {
                        out.write(b);
                        out.flush();
                        n++;
                        Thread.sleep(50);
                    }
                } catch (IOException | InterruptedException e) {
                    // the server closed the connection
                }
                return n;
            });
            Cli.Result r = quickRun(s.peer());
            assertThat(r.exit()).as(r.err()).isZero();
            millisUntilClosed(slow);
            assertThat(err(s)).contains("no complete hello within 500 ms");
            assertThat(sent.get(20, TimeUnit.SECONDS)).isLessThan(hello.length);
        }
    }

    @Test
    void aClientThatVanishesMidRunEndsOnlyItsRun() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served();
             Node vanisher = engine("vanisher")) {
            OobChannel c = OobChannel.connect(s.serve.address(), T, null);
            OobClient.open(c, "vanisher", vanisher.engine().connInfo(), 4096, "dram", "loopback", T, P, null);
            c.close();
            Cli.Result r = quickRun(s.peer());
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(err(s)).contains("failed: initiator left before the end of its run");
        }
    }

    @Test
    void aFrozenInitiatorLosesItsRunAtTheDeadlineAndTheQueuedOneIsToldToWait() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served("--oob-timeout", "1s");
             Node frozen = engine("frozen");
             OobChannel c = OobChannel.connect(s.serve.address(), T, null)) {
            helloThenSilence(c, frozen);
            Cli.Result r = quickRun(s.peer(), "--oob-timeout", "5s");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.err()).contains("waiting for the current run (from frozen at ");
            assertThat(err(s)).contains("initiator sent nothing for 1 s (--oob-timeout); ending its run");
        }
    }

    @Test
    void aBusyInitiatorKeepsATargetWithAShorterTimeoutThanItsOwnWaiting() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served("--oob-timeout", "800ms")) {
            // a 2 s warm-up sends nothing but keep-alives; this initiator's own timeout (30 s) alone would
            // space them a second apart, past the target's 800 ms
            Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--block-sizes", "4K",
                    "--iterations", "2", "--warmup", "0", "--warmup-seconds", "2");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(err(s)).doesNotContain("(--oob-timeout)");
        }
    }

    @Test
    void aTargetThatGivesUpOnARunSaysWhyBeforeClosing() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served("--oob-timeout", "500ms");
             Node silent = engine("silent");
             OobChannel c = OobChannel.connect(s.serve.address(), T, null)) {
            helloThenSilence(c, silent);
            OobMessage m = c.poll(Duration.ofSeconds(5));
            assertThat(m).as("the target's last word").isNotNull();
            assertThat(m.op()).isEqualTo("error");
            assertThat(m.message()).isEqualTo("no message from the initiator for 500 ms (the target's --oob-timeout)");
            assertThatThrownBy(() -> c.poll(Duration.ofSeconds(5))).as("then the target closes the connection")
                    .isInstanceOf(java.io.EOFException.class);
        }
    }

    @Test
    void aFailedRunAsksTheTargetWhyOnlyBriefly() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served();
             Node n = engine("asker")) {
            OobChannel c = OobChannel.connect(s.serve.address(), T, null);
            try (OobClient client = OobClient.open(c, "asker", n.engine().connInfo(), 4096, "dram", "loopback", T, P,
                    null)) {
                long t0 = System.nanoTime();
                assertThat(client.endedBecause()).as("a target still serving the run: pings only").isNull();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(2_000);
                s.serve.shutdown();
                assertThat(client.endedBecause()).isEqualTo("it closed the out-of-band connection");
            }
        }
    }

    @Test
    void anInitiatorFailsInOneLineWhenTheTargetFallsSilent() throws Exception {
        try (ServerSocket silentTarget = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return silentTarget.accept();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Cli.Result r = quickRun("127.0.0.1:" + silentTarget.getLocalPort(), "--oob-timeout", "500ms");
            accepted.get(10, TimeUnit.SECONDS).close();
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.errLines()).hasSize(1);
            assertThat(r.err()).contains("did not answer 'hello': nothing for 500 ms (--oob-timeout)");
        }
    }

    @Test
    void aListenAddressInUseIsNamedAsGiven() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String at = "127.0.0.1:" + taken.getLocalPort();
            Cli.Result r = Cli.run("serve", "--listen", at);
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.errLines()).hasSize(1);
            assertThat(r.err()).contains("cannot listen on " + at + ": ").contains("in use");
        }
    }

    @Test
    void aTargetRefusesABufferLargerThanItsFreeHostMemory(@org.junit.jupiter.api.io.TempDir java.nio.file.Path proc)
            throws Exception {
        java.nio.file.Files.writeString(proc.resolve("meminfo"), "MemTotal: 1048576 kB\nMemAvailable: 524288 kB\n");
        try (TwoHostTest.Served s = new TwoHostTest.Served("--procfs", proc.toString())) {
            Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--block-sizes", "1G",
                    "--iterations", "1", "--warmup", "0");
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).contains("a buffer of 1G needs 1.0 GiB of host memory; this host has 0.5 GiB"
                    + " available on the target");
            assertThat(quickRun(s.peer()).exit()).isZero();
        }
    }
}
