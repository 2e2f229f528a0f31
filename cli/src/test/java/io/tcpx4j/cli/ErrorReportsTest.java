package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * What the two-host commands say when something goes wrong: each failure in one line that names its
 * real cause. Real sockets on 127.0.0.1.
 */
@Timeout(120)
class ErrorReportsTest {

    private static final Duration T = Duration.ofSeconds(10);

    private static Node engine(String name) {
        return Node.start(EngineConfig.defaults(name).withListen("127.0.0.1", 0),
                new Backends.Spec(TransportKind.LOOPBACK, MemoryKind.DRAM, "127.0.0.1"));
    }

    /** Accepts one connection on 127.0.0.1 and hands it to {@code script} on another thread. */
    private static final class OneShotServer implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        final CompletableFuture<Void> done;

        interface Script {
            void run(Socket s) throws Exception;
        }

        OneShotServer(Script script) throws IOException {
            done = CompletableFuture.runAsync(() -> {
                try (Socket s = server.accept()) {
                    script.run(s);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }

        String address() {
            return "127.0.0.1:" + server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    /** Runs a command on another thread; {@link #exit} waits for its code. */
    private static final class Running {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final CommandLine cl = Main.commandLine(Cli.io(out, err, Map.of()));
        final CompletableFuture<Integer> exit;

        Running(String... args) {
            ServeCommand serve = cl.getSubcommands().get("serve").getCommand();
            serve.installSignalHandlers = false;
            exit = CompletableFuture.supplyAsync(() -> cl.execute(args));
        }

        /** The exit code within {@code seconds}; a command still running then is stopped and fails the test. */
        int exit(int seconds) throws Exception {
            try {
                return exit.get(seconds, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                ((ServeCommand) cl.getSubcommands().get("serve").getCommand()).shutdown();
                fail("still running after " + seconds + " s; stdout: " + out + " stderr: " + err);
                return -1;
            }
        }

        String out() {
            return out.toString(StandardCharsets.UTF_8);
        }

        String err() {
            return err.toString(StandardCharsets.UTF_8);
        }
    }

    @Test
    void aServeOnEveryInterfaceNeedsAnAddressToAdvertise() throws Exception {
        for (String[] args : new String[][] {{"serve", "--listen", "0.0.0.0:0"},
                {"bench", "--role", "target", "--listen", "0.0.0.0:0"}}) {
            Running r = new Running(args);
            assertThat(r.exit(20)).as(r.err()).isEqualTo(2);
            assertThat(r.err().split("\\R")).containsExactly("tcpx4j: --listen 0.0.0.0:0 is every interface, and"
                    + " initiators need one address to reach this engine at: add --advertise HOST (this host's"
                    + " address on their network) or --bind HOST (see 'tcpx4j " + args[0] + " --help')");
        }
        Running served = new Running("serve", "--listen", "0.0.0.0:0", "--advertise", "127.0.0.1");
        ServeCommand serve = served.cl.getSubcommands().get("serve").getCommand();
        assertThat(serve.awaitReady(30, TimeUnit.SECONDS)).isTrue();
        try {
            Cli.Result run = Cli.run("bench", "--role", "initiator", "--peer", "127.0.0.1:" + serve.address().port(),
                    "--block-sizes", "4K", "--iterations", "2", "--warmup", "0", "--warmup-seconds", "0");
            assertThat(run.exit()).as(run.err()).isZero();
        } finally {
            serve.shutdown();
        }
        assertThat(served.exit(30)).isZero();
    }

    @Test
    void aTargetWhoseRunFailedExitsOne() throws Exception {
        Running target = new Running("bench", "--role", "target", "--listen", "127.0.0.1:0", "--oob-timeout", "500ms");
        Matcher at = Pattern.compile("waiting for one initiator on 127\\.0\\.0\\.1:(\\d+)").matcher("");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!at.reset(target.out()).find()) {
            assertThat(System.nanoTime() - deadline).as(target.err()).isNegative();
            Thread.sleep(20);
        }
        try (Node frozen = engine("frozen");
             OobChannel c = OobChannel.connect(new HostPort("127.0.0.1", Integer.parseInt(at.group(1))), T, null)) {
            // a hello and the welcome, then nothing, as from a stopped process
            c.send(OobMessage.hello(frozen.engine().name(), frozen.engine().connInfo(), 4096, "dram", "loopback", T));
            c.expect("hello", "welcome", T, null);
            assertThat(target.exit(30)).as(target.err()).isEqualTo(1);
        }
        assertThat(target.err()).contains("failed: initiator sent nothing for 500 ms (--oob-timeout); ending its run");
    }

    @Test
    void aPeerThatIsNotTcpx4jIsNamedAsSuch() throws Exception {
        try (OneShotServer ssh = new OneShotServer(s -> {
            OutputStream out = s.getOutputStream();
            out.write("SSH-2.0-OpenSSH_9.2p1\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            s.getInputStream().read(new byte[4096]);
        })) {
            Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", ssh.address(), "--block-sizes", "4K");
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.errLines()).hasSize(1);
            assertThat(r.err()).contains("does not speak the tcpx4j out-of-band protocol (it sent no JSON message:"
                    + " \"SSH-2.0-OpenSSH_9.2p1.\")");
            assertThat(r.out()).as("no table header for a run that never started").isEmpty();
        }
        try (TwoHostTest.Served s = new TwoHostTest.Served();
             Socket http = new Socket(s.serve.address().host(), s.serve.address().port())) {
            http.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!s.err.toString(StandardCharsets.UTF_8).contains("dropped")) {
                assertThat(System.nanoTime() - deadline).isNegative();
                Thread.sleep(20);
            }
            assertThat(s.err.toString(StandardCharsets.UTF_8)).contains(" before its hello: ")
                    .contains("does not speak the tcpx4j out-of-band protocol (it sent no JSON message: \"GET / HTTP/1.1.\")");
        }
    }

    @Test
    void anUnknownHostIsSaidToBeUnresolvable() {
        Cli.Result peer = Cli.run("bench", "--role", "initiator", "--peer", "nohost.invalid:7117", "--peer-wait", "0");
        assertThat(peer.exit()).isEqualTo(1);
        assertThat(peer.errLines()).containsExactly("tcpx4j: bench failed: could not resolve nohost.invalid, the host of"
                + " --peer nohost.invalid:7117 (no such host name, or no name service here)");
        Cli.Result listen = Cli.run("serve", "--listen", "nohost.invalid:0");
        assertThat(listen.exit()).isEqualTo(1);
        assertThat(listen.errLines()).containsExactly("tcpx4j: serve failed: could not resolve nohost.invalid, the host"
                + " of --listen nohost.invalid:0 (no such host name, or no name service here)");
    }

    @Test
    void aTargetThatEndsARunIsTheCauseNotTheRefusedTransfersAfterIt() throws Exception {
        try (Node target = engine("fake-target");
             OneShotServer fake = new OneShotServer(s -> {
                 OobChannel c = new OobChannel(s);
                 OobMessage hello = c.receive(T);
                 TargetSide side = new TargetSide(target, java.util.List.of(), hello.bytes());
                 target.engine().loadPeer(hello.name(), hello.connInfo());
                 // a 40 ms timeout: the initiator's keep-alives come every 10 ms
                 c.send(OobMessage.welcome(target.engine().name(), target.engine().connInfo(), side.metadata(),
                         Duration.ofMillis(40), 2));
                 Thread.sleep(500);
                 // what a target does when the initiator falls silent: its reason, then it closes the
                 // connection (unread keep-alives make that a reset) and frees the run's buffer
                 c.send(OobMessage.error("no message from the initiator for 1 s (the target's --oob-timeout)"));
                 s.setSoLinger(true, 0);
                 c.close();
                 Thread.sleep(300);
                 side.close();
             })) {
            Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", fake.address(), "--block-sizes", "64M",
                    "--iterations", "2000", "--warmup", "0", "--warmup-seconds", "0", "--no-baseline");
            fake.done.get(30, TimeUnit.SECONDS);
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.errLines()).as("one line: no engine warnings before it").hasSize(1);
            assertThat(r.err()).startsWith("tcpx4j: bench failed: bench target /" + fake.address() + " ended the run:"
                    + " no message from the initiator for 1 s (the target's --oob-timeout) (then here: ");
            assertThat(r.out()).as("no table header for a run that failed before its first row").isEmpty();
        }
    }
}
