package io.tcpx4j.it.reliability;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.protocol.ConnInfo;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The control stream over TLS ({@code EngineConfig.withControlTls}) with self-signed certificates made
 * here by the JDK's keytool: two TLS engines transfer, and what crosses the wire is TLS, not frames; a
 * plain-TCP engine against a TLS one fails at once either way round, with an error that says TLS, and
 * leaves no connection behind; a dialer that does not trust the acceptor's certificate gets nowhere.
 */
@Timeout(120)
class ControlTlsIT {

    private static final char[] PASSWORD = "tcpx4j-test".toCharArray();

    @TempDir
    static Path dir;
    private static SSLContext trusted;
    private static SSLContext stranger;
    /** The stranger's key, but trusting the trusted certificate: a dialer the acceptor does not know. */
    private static SSLContext unknownClient;

    @BeforeAll
    static void certificates() throws Exception {
        Path t = keystore("trusted");
        Path s = keystore("stranger");
        trusted = context(t, t);
        stranger = context(s, s);
        unknownClient = context(s, t);
    }

    /** A PKCS12 keystore with one self-signed EC key for 127.0.0.1 and localhost. */
    private static Path keystore(String name) throws Exception {
        Path ks = dir.resolve(name + ".p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "EC",
                "-groupname", "secp256r1", "-dname", "CN=" + name, "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-validity", "2", "-storetype", "PKCS12", "-keystore", ks.toString(),
                "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("keytool finished").isTrue();
        assertThat(p.exitValue()).as("keytool: %s", out).isZero();
        return ks;
    }

    private static KeyStore load(Path keystore) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, PASSWORD);
        }
        return ks;
    }

    /** The key of {@code keys}, and the one certificate of {@code trust} as the only trust. */
    private static SSLContext context(Path keys, Path trust) throws Exception {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(load(keys), PASSWORD);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(load(trust));
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx;
    }

    private static Node tlsNode(String name, SSLContext ctx) {
        return new Node(Node.config(name).withControlTls(ctx, true));
    }

    @Test
    void twoTlsEnginesTransferAndTheWireCarriesTlsRecordsOnly() throws Exception {
        try (Node a = tlsNode("tls-a", trusted); Node b = tlsNode("tls-b", trusted);
             RecordingProxy proxy = new RecordingProxy("127.0.0.1", ConnInfo.decode(b.engine.connInfo()).port())) {
            ConnInfo bInfo = ConnInfo.decode(b.engine.connInfo());
            a.engine.loadPeer("tls-b", new ConnInfo("tls-b", "127.0.0.1", proxy.port(), bInfo.secret()).encode());
            b.engine.loadPeer("tls-a", a.engine.connInfo());
            RegisteredMemory src = a.randomRegion(3 << 20, 21);
            RegisteredMemory dst = b.randomRegion(3 << 20, 22);
            b.publish(dst, a);
            Transfer w = a.engine.session("tls-b").write(List.of(src.descriptor()), List.of(dst.descriptor()), "landed".getBytes());
            assertThat(Node.await(w, Duration.ofSeconds(20))).as("WRITE over TLS: %s", w.error()).isEqualTo(TransferStatus.DONE);
            assertThat(Buffers.firstDifference(src.descriptor().address(), dst.descriptor().address(), 3 << 20)).isEqualTo(-1);
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> !b.engine.drainNotifications().isEmpty())).isTrue();
            // and back: a READ on the same connection
            long back = a.randomRegion(4096, 23).descriptor().address();
            Transfer r = a.engine.session("tls-b").read(List.of(Node.dram(back, 4096)),
                    List.of(Node.dram(dst.descriptor().address() + 4096, 4096)), null);
            assertThat(Node.await(r, Duration.ofSeconds(20))).as("READ over TLS: %s", r.error()).isEqualTo(TransferStatus.DONE);
            assertThat(Buffers.firstDifference(back, dst.descriptor().address() + 4096, 4096)).isEqualTo(-1);
            byte[] sent = proxy.fromDialer();
            byte[] got = proxy.fromAcceptor();
            assertThat(sent.length).isGreaterThan(100);
            assertThat(sent[0]).as("first byte the dialer sent: a TLS handshake record").isEqualTo((byte) 0x16);
            assertThat(got[0]).as("first byte the acceptor sent: a TLS handshake record").isEqualTo((byte) 0x16);
            // in plain TCP the HELLO carries the dialer's name and the CHALLENGE the acceptor's: not here
            assertThat(new String(sent, StandardCharsets.ISO_8859_1)).doesNotContain("tls-a");
            assertThat(new String(got, StandardCharsets.ISO_8859_1)).doesNotContain("tls-b");
        }
    }

    /**
     * A TLS engine serving three TLS peers at once reads its control streams through its control poll
     * (more than one connection): WRITEs of inline and chunked size, READs, and every notification.
     */
    @Test
    void aTlsEngineServesSeveralPeersAtOnce() throws Exception {
        int peers = 3;
        int block = (1 << 20) + 4096;
        List<Node> spokes = new ArrayList<>();
        try (Node hub = tlsNode("tls-hub", trusted)) {
            RegisteredMemory in = hub.randomRegion((long) peers * block, 30);
            RegisteredMemory out = hub.randomRegion((long) peers * block, 31);
            List<Thread> threads = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            try {
                for (int i = 0; i < peers; i++) {
                    Node spoke = tlsNode("tls-spoke" + i, trusted);
                    spokes.add(spoke);
                    spoke.meet(hub);
                    hub.publish(in, spoke);
                    hub.publish(out, spoke);
                }
                for (int i = 0; i < peers; i++) {
                    Node spoke = spokes.get(i);
                    long slot = (long) i * block;
                    long src = spoke.randomRegion(block, 40 + i).descriptor().address();
                    long dst = spoke.alloc(block);
                    spoke.register(dst, block);
                    Thread t = new Thread(() -> {
                        try {
                            for (int round = 0; round < 6; round++) {
                                int size = round % 2 == 0 ? 4096 : block;
                                Transfer w = spoke.engine.session("tls-hub").write(List.of(Node.dram(src, size)),
                                        List.of(Node.dram(in.descriptor().address() + slot, size)), "w".getBytes());
                                assertThat(Node.await(w, Duration.ofSeconds(20))).as("WRITE: %s", w.error())
                                        .isEqualTo(TransferStatus.DONE);
                                Transfer r = spoke.engine.session("tls-hub").read(List.of(Node.dram(dst, size)),
                                        List.of(Node.dram(out.descriptor().address() + slot, size)), "r".getBytes());
                                assertThat(Node.await(r, Duration.ofSeconds(20))).as("READ: %s", r.error())
                                        .isEqualTo(TransferStatus.DONE);
                                assertThat(Buffers.firstDifference(src, in.descriptor().address() + slot, size))
                                        .isEqualTo(-1);
                                assertThat(Buffers.firstDifference(dst, out.descriptor().address() + slot, size))
                                        .isEqualTo(-1);
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    }, "tls-spoke-" + i);
                    threads.add(t);
                    t.start();
                }
                for (Thread t : threads) {
                    t.join();
                }
                assertThat(failure.get()).as("a spoke failed").isNull();
                List<Notification> notes = new ArrayList<>();
                assertThat(Node.eventually(Duration.ofSeconds(10), () -> {
                    notes.addAll(hub.engine.drainNotifications());
                    return notes.size() >= peers * 12;
                })).as("every notification at the hub").isTrue();
                assertThat(notes).hasSize(peers * 12);
                for (int i = 0; i < peers; i++) {
                    String name = "tls-spoke" + i;
                    assertThat(notes.stream().filter(n -> n.agent().equals(name))).hasSize(12);
                }
            } finally {
                for (Node spoke : spokes) {
                    spoke.close();
                }
            }
        }
    }

    @Test
    void aPlainEngineAndATlsEngineFailAtOnceEitherWayRoundWithAnErrorThatSaysTls() {
        try (Node secure = tlsNode("secure", trusted); Node plain = new Node(Node.config("plain"))) {
            secure.meet(plain);
            RegisteredMemory onSecure = secure.randomRegion(4096, 31);
            RegisteredMemory onPlain = plain.randomRegion(4096, 32);
            secure.publish(onSecure, plain);
            plain.publish(onPlain, secure);
            // the plain engine dials the TLS one: the TLS side answers in plain framing why, then closes
            Transfer t = plain.engine.session("secure").write(List.of(onPlain.descriptor()), List.of(onSecure.descriptor()), null);
            assertThat(Node.await(t, Duration.ofSeconds(10))).isEqualTo(TransferStatus.FAILED);
            assertThat(t.error()).get().as("%s", t.error()).extracting(e -> e.code()).isEqualTo(Code.NOT_SUPPORTED);
            assertThat(t.error()).get().extracting(Throwable::getMessage).asString().contains("requires TLS");
            // the TLS engine dials the plain one: the plain side cannot parse a TLS record and closes
            Transfer u = secure.engine.session("plain").write(List.of(onSecure.descriptor()), List.of(onPlain.descriptor()), null);
            assertThat(Node.await(u, Duration.ofSeconds(10))).isEqualTo(TransferStatus.FAILED);
            assertThat(u.error()).get().extracting(Throwable::getMessage).asString()
                    .contains("TLS handshake").doesNotContain("not up after");
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> secure.stats().connections() == 0
                    && plain.stats().connections() == 0)).as("no connection left: %s / %s", secure, plain).isTrue();
        }
    }

    @Test
    void requiredClientAuthRefusesADialerWhoseCertificateTheAcceptorDoesNotTrust() {
        try (Node strict = tlsNode("strict", trusted);
             Node lenient = new Node(Node.config("lenient").withControlTls(trusted, false));
             Node dialer = tlsNode("unknown", unknownClient)) {
            dialer.meet(strict);
            dialer.meet(lenient);
            RegisteredMemory src = dialer.randomRegion(4096, 51);
            RegisteredMemory onStrict = strict.randomRegion(4096, 52);
            RegisteredMemory onLenient = lenient.randomRegion(4096, 53);
            strict.publish(onStrict, dialer);
            lenient.publish(onLenient, dialer);
            Transfer refused = dialer.engine.session("strict").write(List.of(src.descriptor()), List.of(onStrict.descriptor()), null);
            assertThat(Node.await(refused, Duration.ofSeconds(10))).isEqualTo(TransferStatus.FAILED);
            assertThat(refused.error()).get().extracting(Throwable::getMessage).asString()
                    .containsIgnoringCase("certificate").doesNotContain("not up after");
            // the same dialer is served where client certificates are not required: the refusal is the flag's doing
            Transfer served = dialer.engine.session("lenient").write(List.of(src.descriptor()), List.of(onLenient.descriptor()), null);
            assertThat(Node.await(served, Duration.ofSeconds(10))).as("%s", served.error()).isEqualTo(TransferStatus.DONE);
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> strict.stats().connections() == 0))
                    .as("the strict acceptor keeps nothing: %s", strict).isTrue();
        }
    }

    @Test
    void clientAuthWithoutTlsIsRefusedAsABadConfiguration() {
        assertThatThrownBy(() -> Node.config("x").withControlTls(null, true))
                .isInstanceOf(TransferException.class).hasMessageContaining("controlTlsClientAuth needs controlTls")
                .extracting(e -> ((TransferException) e).code()).isEqualTo(Code.INVALID_PARAM);
        assertThat(Node.config("x").withControlTls(trusted, false).controlTls()).isSameAs(trusted);
        assertThat(Node.config("x").controlTls()).as("plain TCP by default").isNull();
    }

    @Test
    void aDialerThatDoesNotTrustTheAcceptorsCertificateGetsNowhere() {
        try (Node acceptor = tlsNode("acceptor", trusted); Node dialer = tlsNode("dialer", stranger)) {
            dialer.meet(acceptor);
            RegisteredMemory src = dialer.randomRegion(4096, 41);
            RegisteredMemory dst = acceptor.randomRegion(4096, 42);
            byte[] before = Buffers.read(dst.descriptor().address(), 4096);
            acceptor.publish(dst, dialer);
            Transfer t = dialer.engine.session("acceptor").write(List.of(src.descriptor()), List.of(dst.descriptor()), null);
            assertThat(Node.await(t, Duration.ofSeconds(10))).isEqualTo(TransferStatus.FAILED);
            assertThat(t.error()).get().extracting(Throwable::getMessage).asString()
                    .contains("TLS handshake").doesNotContain("not up after");
            assertThat(Buffers.read(dst.descriptor().address(), 4096)).isEqualTo(before);
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> acceptor.stats().connections() == 0))
                    .as("the acceptor holds nothing for the stranger: %s", acceptor).isTrue();
        }
    }
}
