package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connections that never finish a hello (silent, a hello cut short, garbage) do not lock real
 * initiators out of a target, and leave no thread behind; an initiator that a target turns away
 * before its welcome (full, or the connection dropped) tries again within {@code --peer-wait}. Real
 * sockets on 127.0.0.1, a real {@code serve} over the loopback transport.
 */
@Timeout(180)
class OobLockoutTest {

    private static final Duration T = Duration.ofSeconds(10);
    private static final int SILENT = 40;

    /** What each connection that never completes its hello sends. */
    enum Silence {
        NOTHING {
            @Override
            byte[] bytes() {
                return new byte[0];
            }
        },
        PARTIAL_HELLO {
            @Override
            byte[] bytes() {
                return "{\"op\":\"hello\",\"version\":2,\"name\":\"half\",\"connInfo\":\"AQ"
                        .getBytes(StandardCharsets.UTF_8);
            }
        },
        GARBAGE {
            @Override
            byte[] bytes() {
                byte[] junk = new byte[2048];
                new Random(7).nextBytes(junk);
                for (int i = 0; i < junk.length; i++) {
                    if (junk[i] == '\n') {
                        junk[i] = 0; // no line end: the bytes never make a message
                    }
                }
                return junk;
            }
        };

        abstract byte[] bytes();
    }

    /** A short run whose every byte is checked, as JSON. */
    private static Cli.Result verifiedRun(String peer, String... more) {
        List<String> args = new ArrayList<>(List.of("bench", "--role", "initiator", "--peer", peer, "--block-sizes",
                "4K,64K", "--iterations", "3", "--warmup", "0", "--warmup-seconds", "0", "--check-consistency",
                "--no-baseline", "--json"));
        args.addAll(List.of(more));
        return Cli.run(args.toArray(String[]::new));
    }

    private static void assertVerified(Cli.Result r) throws IOException {
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode doc = new ObjectMapper().readTree(r.out());
        assertThat(doc.get("rows").size()).isEqualTo(2);
        assertThat(doc.get("mismatches").asLong()).isZero();
        for (JsonNode row : doc.get("rows")) {
            assertThat(row.get("iterations").asInt()).isEqualTo(3);
            assertThat(row.get("mismatches").asLong()).isZero();
        }
    }

    /** The target's connection threads alive in this JVM now. */
    private static long clientThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("tcpx4j-oob-client"))
                .count();
    }

    /** Polls {@code condition} every 20 ms; false if it did not hold within {@code within}. */
    private static boolean eventually(Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    private static String err(TwoHostTest.Served s) {
        return s.err.toString(StandardCharsets.UTF_8);
    }

    private static void closeAll(List<? extends AutoCloseable> all) throws Exception {
        for (AutoCloseable c : all) {
            c.close();
        }
    }

    @ParameterizedTest
    @EnumSource(Silence.class)
    void fortyConnectionsWithoutAHelloLockNoInitiatorOutAndLeaveNoThreadBehind(Silence silence) throws Exception {
        // a hello deadline far beyond the test: only what the target does on a new connection can let the
        // initiator in, not the silent ones timing out
        try (TwoHostTest.Served s = new TwoHostTest.Served("--hello-timeout", "10m")) {
            long before = clientThreads();
            List<Socket> silent = new ArrayList<>();
            try {
                byte[] bytes = silence.bytes();
                for (int i = 0; i < SILENT; i++) {
                    Socket c = new Socket(s.serve.address().host(), s.serve.address().port());
                    silent.add(c);
                    if (bytes.length > 0) {
                        c.getOutputStream().write(bytes);
                        c.getOutputStream().flush();
                    }
                }
                Cli.Result r = verifiedRun(s.peer());
                assertVerified(r);
                assertThat(clientThreads()).as("threads while %d connections wait for their hello", SILENT)
                        .isLessThanOrEqualTo(before + 1);
            } finally {
                closeAll(silent);
            }
            assertThat(eventually(Duration.ofSeconds(30), () -> clientThreads() <= before))
                    .as("the target's connection threads back to %d (now %d)", before, clientThreads()).isTrue();
            assertThat(err(s)).contains("run from bench-initiator-").contains(" done");
        }
    }

    @Test
    void floodsFromOtherAddressesDropNeitherAnEarlierHalfSaidHelloNorANewcomer() throws Exception {
        // every 127.x.y.z is this host's loopback: clients bound to 127.0.0.a are distinct remote addresses
        try (TwoHostTest.Served s = new TwoHostTest.Served("--hello-timeout", "10m");
             Node half = Node.start(EngineConfig.defaults("half").withListen("127.0.0.1", 0),
                     new Backends.Spec(TransportKind.LOOPBACK, MemoryKind.DRAM, "127.0.0.1"))) {
            HostPort at = s.serve.address();
            byte[] hello = new ObjectMapper().writeValueAsBytes(
                    OobMessage.hello("half", half.engine().connInfo(), 4096, "dram", "loopback", T));
            int cut = hello.length / 2;
            List<Socket> flood = new ArrayList<>();
            try (Socket early = new Socket(at.host(), at.port(), InetAddress.getByName("127.0.0.3"), 0)) {
                early.getOutputStream().write(hello, 0, cut);
                early.getOutputStream().flush();
                for (int i = 0; i < SILENT; i++) {
                    flood.add(new Socket(at.host(), at.port(), InetAddress.getByName("127.0.0.2"), 0));
                }
                for (int a = 4; a <= 12; a++) {
                    for (int i = 0; i < HelloGate.PER_ADDRESS; i++) {
                        flood.add(new Socket(at.host(), at.port(), InetAddress.getByName("127.0.0." + a), 0));
                    }
                }
                early.getOutputStream().write(hello, cut, hello.length - cut);
                early.getOutputStream().write('\n');
                early.getOutputStream().flush();
                assertThat(new OobChannel(early).receive(T).op()).as(err(s)).isEqualTo("welcome");
                // a newcomer while the flood still waits: it is told to wait for the early one's run
                CompletableFuture<Cli.Result> run = CompletableFuture.supplyAsync(() -> verifiedRun(s.peer()));
                assertThat(eventually(Duration.ofSeconds(60), () -> run.isDone()
                        || err(s).contains("bench-initiator-") && err(s).contains(" waits for the current run")))
                        .as(err(s)).isTrue();
                early.close(); // its run ends; the newcomer's starts
                assertVerified(run.get(120, TimeUnit.SECONDS));
            } finally {
                closeAll(flood);
            }
            // the first line about a dropped connection is always written (later ones at most once a second)
            assertThat(err(s)).contains("a newer connection from 127.0.0.2 takes its place");
        }
    }

    @Test
    void anInitiatorThatAFullTargetTurnsAwayTriesAgainWithinPeerWait() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served();
             Node holder = Node.start(EngineConfig.defaults("holder").withListen("127.0.0.1", 0),
                     new Backends.Spec(TransportKind.LOOPBACK, MemoryKind.DRAM, "127.0.0.1"))) {
            List<OobChannel> held = new ArrayList<>();
            CompletableFuture<Cli.Result> run = null;
            try {
                // one run in progress and the rest of the target's connections queued behind it
                OobChannel first = OobChannel.connect(s.serve.address(), T, null);
                held.add(first);
                first.call(OobMessage.hello("holder", holder.engine().connInfo(), 4096, "dram", "loopback", T),
                        "welcome", T);
                for (int i = 1; i < TargetServer.MAX_CONNECTIONS; i++) {
                    OobChannel c = OobChannel.connect(s.serve.address(), T, null);
                    held.add(c);
                    c.send(OobMessage.hello("queued-" + i, holder.engine().connInfo(), 4096, "dram", "loopback", T));
                    assertThat(c.receive(T).op()).isEqualTo("wait");
                }
                run = CompletableFuture.supplyAsync(() -> verifiedRun(s.peer(), "--peer-wait", "120"));
                CompletableFuture<Cli.Result> r = run;
                assertThat(eventually(Duration.ofSeconds(60), () -> r.isDone() || err(s).contains("turned away")))
                        .as(err(s)).isTrue();
            } finally {
                closeAll(held);
            }
            Cli.Result r = run.get(120, TimeUnit.SECONDS);
            assertVerified(r);
            assertThat(r.err()).contains("retrying for up to 120 s (--peer-wait)");
        }
    }

    @Test
    void anInitiatorDroppedBeforeItsWelcomeTriesAgainWithinPeerWait() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served();
             TestDroppingProxy proxy = new TestDroppingProxy(s.serve.address().port(), 2)) {
            Cli.Result r = verifiedRun(proxy.address(), "--peer-wait", "60");
            assertVerified(r);
            assertThat(proxy.dropped.get()).isEqualTo(2);
            assertThat(r.err()).contains("retrying for up to 60 s (--peer-wait)");
        }
    }

    /**
     * A test double between an initiator and a target: it closes the first {@code drops} connections
     * as soon as their first bytes (the hello) arrive, as a target does that drops a connection before
     * its welcome, and relays the later ones to the target.
     */
    private static final class TestDroppingProxy implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final AtomicInteger dropped = new AtomicInteger();
        private final List<Socket> relayed = new ArrayList<>();

        TestDroppingProxy(int targetPort, int drops) throws IOException {
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        Socket in = server.accept();
                        if (dropped.get() < drops) {
                            try (in) {
                                in.getInputStream().read(); // the hello has begun: then the drop
                            }
                            dropped.incrementAndGet();
                            continue;
                        }
                        Socket out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                        synchronized (relayed) {
                            relayed.add(in);
                            relayed.add(out);
                        }
                        pump(in, out);
                        pump(out, in);
                    }
                } catch (IOException closed) {
                    // the proxy was closed
                }
            }, "test-dropping-proxy");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private static void pump(Socket from, Socket to) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[8192];
                try {
                    InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream();
                    int n;
                    while ((n = in.read(buf)) >= 0) {
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException e) {
                    // one side closed
                }
                try {
                    to.shutdownOutput();
                } catch (IOException ignored) {
                    // already closed
                }
            }, "test-dropping-proxy-pump");
            t.setDaemon(true);
            t.start();
        }

        String address() {
            return "127.0.0.1:" + server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            server.close();
            synchronized (relayed) {
                for (Socket s : relayed) {
                    s.close();
                }
            }
        }
    }
}
