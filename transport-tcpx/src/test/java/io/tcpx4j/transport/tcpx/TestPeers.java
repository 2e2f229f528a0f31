package io.tcpx4j.transport.tcpx;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The C test peer builds (src/test/native/testpeer.c, compiled by the Maven build) and helpers. With
 * the system property {@value #REAL_PLUGIN} naming a real net plugin library, that library stands in
 * for the v7 build, and every test that needs another build or the peer's own symbols and switches is
 * skipped, saying which (docs/TCPX.md: running the tests against a real plugin).
 */
final class TestPeers {

    /** A real net plugin library to run the tests against instead of the test peer's v7 build. */
    static final String REAL_PLUGIN = "tcpx4j.test.plugin";

    private TestPeers() {
    }

    /** The real plugin library the tests run against, or null for the test peer. */
    static String realPlugin() {
        String p = System.getProperty(REAL_PLUGIN);
        return p == null || p.isBlank() ? null : p;
    }

    /** Skips the calling test when a real plugin stands in for the peer: it needs {@code what} of the peer. */
    static void requireTestPeer(String what) {
        assumeTrue(realPlugin() == null, () -> "needs the test peer's " + what + "; " + REAL_PLUGIN
                + " names a real plugin (" + realPlugin() + ")");
    }

    /** One of the test peer's own exported functions (not part of ncclNet); skips under a real plugin. */
    static Function extra(String variant, String symbol) {
        requireTestPeer(symbol + "()");
        return NativeLibrary.getInstance(path(variant)).getFunction(symbol);
    }

    static Path dir() {
        String d = System.getProperty("tcpx4j.testpeer.dir");
        Path p = d != null ? Path.of(d) : Path.of("target", "native");
        assertThat(p.resolve("libtcpx4j-net-testpeer-v7.so"))
                .as("test peer built by the Maven build (mvnw verify -pl transport-tcpx -am)").exists();
        return p;
    }

    /**
     * At which test that finds its bytes moved the test peer reports a request done: 1, or what
     * TCPX4J_TESTPEER_LATE_TESTS says (the pom's late-completions run sets it).
     */
    static int lateTests() {
        String v = System.getenv("TCPX4J_TESTPEER_LATE_TESTS");
        return v == null || v.isBlank() ? 1 : Math.max(1, Integer.parseInt(v.trim()));
    }

    /** v5, v6, v7, v8, v7-hostonly, v7-blocking, v8-nullopt, v7-nullio or nosym (see the pom). */
    static String path(String variant) {
        if (realPlugin() != null) {
            if (variant.equals("v7")) {
                return realPlugin();
            }
            requireTestPeer(variant + " build (the real plugin stands in for v7 only)");
        }
        return dir().resolve("libtcpx4j-net-testpeer-" + variant + ".so").toAbsolutePath().toString();
    }

    /**
     * A private copy under a new name: a fresh dlopen, separate from every other test's. Its bytes end in
     * a trailer naming it (past everything the loader maps), so that it is no byte-for-byte copy of a
     * library already loaded, which the loader refuses ({@link LoadedPlugins}).
     */
    static String copy(String variant, Path tempDir, String name) {
        requireTestPeer("private copies (a second copy of a real plugin's library may abort the process)");
        try {
            Path to = tempDir.resolve("libtcpx4j-net-testpeer-" + name + ".so");
            Files.copy(Path.of(path(variant)), to, StandardCopyOption.REPLACE_EXISTING);
            Files.writeString(to, "tcpx4j test copy " + name + " " + System.nanoTime(), StandardOpenOption.APPEND);
            return to.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An in-process transport over a peer build (init called here; the peer's init is harmless). */
    static TcpxTransport transport(String variant) {
        TcpxOptions o = TcpxOptions.defaults().withLibrary(path(variant)).withProbeInChildProcess(false);
        return TcpxTransport.open(o, new HostMemory());
    }

    /** As {@link #transport(String)}, with the per-chunk calls on {@code path}. */
    static TcpxTransport transport(String variant, NetPlugin.CallPath path) {
        TcpxOptions o = TcpxOptions.defaults().withLibrary(path(variant)).withProbeInChildProcess(false);
        return new TcpxTransport(PluginLoader.load(o).withCallPath(path), new HostMemory(),
                TcpxRequestLayout.X86_64_2024, o.setupTimeout());
    }

    /** A connected send/recv pair on device 0, connect and accept polled until both are non-null. */
    record Pair(TcpxTransport transport, Listener listener, SendComm send, RecvComm recv) {
        static Pair connect(TcpxTransport t) {
            return connect(t, t.listen(0));
        }

        /** Connects to {@code l}, which must not have yielded its comm yet. */
        static Pair connect(TcpxTransport t, Listener l) {
            byte[] h = l.handle();
            SendComm s = null;
            RecvComm r = null;
            long deadline = System.nanoTime() + 10_000_000_000L;
            int polls = 0;
            while (s == null || r == null) {
                if (s == null) {
                    s = t.connect(0, h);
                }
                if (r == null) {
                    r = t.accept(l);
                }
                polls++;
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no connection after " + polls + " polls");
                }
                Thread.onSpinWait();
            }
            return new Pair(t, l, s, r);
        }
    }

    /**
     * Tests the requests until all are done, each only while it is the oldest uncompleted request of
     * its comm (TCPX refuses any other): requests of one comm must be given in posting order, and a
     * comm's later request is tested only once its earlier ones are done.
     */
    static void pump(TcpxTransport t, NetRequest... requests) {
        boolean[] done = new boolean[requests.length];
        long deadline = System.nanoTime() + 20_000_000_000L;
        int left = requests.length;
        while (left > 0) {
            Set<TcpxComm> waiting = new HashSet<>();
            for (int i = 0; i < requests.length; i++) {
                TcpxComm c = ((TcpxNetRequest) requests[i]).comm;
                if (done[i] || waiting.contains(c)) {
                    continue;
                }
                if (t.test(requests[i])) {
                    done[i] = true;
                    left--;
                } else {
                    waiting.add(c);
                }
            }
            if (System.nanoTime() > deadline) {
                throw new TransferException(TransferException.Code.UNKNOWN, "requests not done in time");
            }
        }
    }
}
