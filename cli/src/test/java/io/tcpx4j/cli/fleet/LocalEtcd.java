package io.tcpx4j.cli.fleet;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * A real etcd server (the {@code etcd} binary of Debian's etcd-server, which {@code .ci/run}
 * installs) on 127.0.0.1, free ports and a temporary data directory, for one test class.
 * Without the binary the test is skipped, unless {@code CI=true}, where it fails: CI must run them.
 * A test class holds one through {@link PerClass}.
 */
public final class LocalEtcd implements AutoCloseable {

    private final Process process;
    private final Path dir;
    private final URI client;

    private LocalEtcd(Process process, Path dir, URI client) {
        this.process = process;
        this.dir = dir;
        this.client = client;
    }

    /** The etcd binary on the PATH (or Debian's), or a skipped (CI: failed) test. */
    static Path binary() {
        String path = System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/bin";
        for (String d : path.split(File.pathSeparator)) {
            Path p = Path.of(d.isEmpty() ? "." : d, "etcd");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        String why = "etcd is not installed (Debian: apt-get install etcd-server; .ci/run installs it)";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            Assertions.fail(why + ", and CI=true: fleet tests must run on CI");
        }
        Assumptions.abort(why + ": skipping the fleet tests that need a real etcd");
        throw new AssertionError("unreachable");
    }

    /** Starts etcd and waits (at most 60 s) until it answers. */
    public static LocalEtcd start() throws IOException, InterruptedException {
        Path etcd = binary();
        Path dir = Files.createTempDirectory("tcpx4j-etcd");
        int clientPort = freePort();
        int peerPort = freePort();
        String client = "http://127.0.0.1:" + clientPort;
        String peer = "http://127.0.0.1:" + peerPort;
        Process p = new ProcessBuilder(etcd.toString(), "--name", "tcpx4j-test", "--data-dir",
                dir.resolve("data").toString(), "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "tcpx4j-test=" + peer)
                .redirectErrorStream(true).redirectOutput(dir.resolve("etcd.log").toFile()).start();
        LocalEtcd server = new LocalEtcd(p, dir, URI.create(client));
        EtcdClient c = server.client();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                c.range("tcpx4j/");
                return server;
            } catch (IOException e) {
                if (!p.isAlive() || System.nanoTime() - deadline > 0) {
                    String log = Files.readString(dir.resolve("etcd.log"));
                    server.close();
                    throw new IOException("etcd did not come up on " + client + ": " + e.getMessage() + "\n" + log, e);
                }
                LockSupport.parkNanos(50_000_000L);
            }
        }
    }

    public URI url() {
        return client;
    }

    EtcdClient client() {
        return new EtcdClient(List.of(client), Duration.ofSeconds(5));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Stops etcd and deletes its data. */
    @Override
    public void close() throws IOException, InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    /**
     * One etcd for a test class: {@code @RegisterExtension static final LocalEtcd.PerClass etcd = new
     * LocalEtcd.PerClass();} starts it before the class's first test and stops it after its last.
     */
    public static final class PerClass implements BeforeAllCallback, AfterAllCallback {
        private LocalEtcd etcd;

        @Override
        public void beforeAll(ExtensionContext context) throws Exception {
            etcd = start();
        }

        @Override
        public void afterAll(ExtensionContext context) throws Exception {
            if (etcd != null) {
                etcd.close();
                etcd = null;
            }
        }

        public URI url() {
            return running().url();
        }

        EtcdClient client() {
            return running().client();
        }

        private LocalEtcd running() {
            if (etcd == null) {
                throw new IllegalStateException("etcd runs only while the test class does");
            }
            return etcd;
        }
    }
}
