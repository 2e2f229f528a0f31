package io.tcpx4j.it.reliability;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.RefusalCode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hostile peer on the control port ({@link HostileClient}): wrong, replayed or truncated proofs,
 * replays of a recorded honest handshake, a fake acceptor, frames before HELLO, oversized, truncated and
 * garbage frames, and, once admitted with the right secret, READs and
 * WRITEs (with their data pushed) at addresses outside the registered regions. The target's memory
 * (its region and unregistered guard bands on both sides) must stay byte-identical, and the target
 * must keep serving an honest peer after each attack.
 */
@Timeout(60)
class HostilePeerIT {

    private static final int GUARD = 64 * 1024;
    private static final int REGION = 256 * 1024;
    private static final int MALLORY_OK = RefusalCode.NONE.wire();
    private static final int NOT_ALLOWED = RefusalCode.NOT_ALLOWED.wire();
    static final AtomicInteger ATTACKS = new AtomicInteger();
    static final AtomicInteger REFUSED = new AtomicInteger();

    private Node target;
    private Node friend;
    private long block;
    private long region;
    private long regionEnd;
    private byte[] expected;
    private ConnInfo info;
    private RegisteredMemory friendSrc;
    private RegisteredMemory targetRegion;

    @AfterAll
    static void figures() {
        System.out.printf("[hostile] %d attacker connections, %d out-of-range READs and WRITEs refused, target memory identical%n",
                ATTACKS.get(), REFUSED.get());
    }

    @BeforeEach
    void setUp() {
        EngineConfig cfg = EngineConfig.defaults("target")
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofMillis(250));
        target = new Node(cfg);
        friend = new Node(Node.config("friend"));
        block = target.alloc(GUARD + REGION + GUARD);
        Buffers.fillRandom(block, GUARD + REGION + GUARD, 42);
        region = block + GUARD;
        regionEnd = region + REGION;
        targetRegion = target.register(region, REGION);
        expected = Buffers.read(block, GUARD + REGION + GUARD);
        info = ConnInfo.decode(target.engine.connInfo());
        friend.meet(target);
        target.publish(targetRegion, friend);
        friendSrc = friend.randomRegion(REGION, 7);
    }

    @AfterEach
    void checkAndClose() {
        try {
            byte[] now = Buffers.read(block, GUARD + REGION + GUARD);
            assertThat(firstDifference(now, expected)).as("first changed byte of the target's memory (guard, region, guard)")
                    .isEqualTo(-1);
            // the target still serves an honest peer, and holds nothing for the attacker
            Transfer w = friend.engine.session("target").write(List.of(Node.dram(friendSrc.descriptor().address(), 1000)),
                    List.of(Node.dram(region + 5000, 1000)), null);
            assertThat(Node.await(w, Duration.ofSeconds(10))).as("honest peer after the attack: %s", w.error())
                    .isEqualTo(TransferStatus.DONE);
            assertThat(Buffers.firstDifference(friendSrc.descriptor().address(), region + 5000, 1000)).isEqualTo(-1);
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> target.stats().connections() == 1
                    && target.stats().liveOperations() == 0 && target.stats().outstandingRequests() == 0))
                    .as("target holds nothing for the attacker: %s", target).isTrue();
            assertThat(target.engine.drainNotifications()).as("notifications from attackers").isEmpty();
        } finally {
            friend.close();
            target.close();
        }
    }

    /** Index of the first difference, or -1; a byte in {@link #either} may also hold its alternative. */
    private int firstDifference(byte[] now, byte[] want) {
        for (int i = 0; i < want.length; i++) {
            if (now[i] != want[i] && !(i >= eitherFrom && i < eitherTo && now[i] == eitherValue)) {
                return i;
            }
        }
        return -1;
    }

    private int eitherFrom;
    private int eitherTo;
    private byte eitherValue;

    /** Bytes [from, to) of the block may hold {@code value} instead (a chunk that may or may not have landed). */
    private void either(int from, int to, byte value) {
        eitherFrom = from;
        eitherTo = to;
        eitherValue = value;
    }

    private byte[] secret() {
        return info.secret();
    }

    private HostileClient connect() throws Exception {
        ATTACKS.incrementAndGet();
        return new HostileClient(info);
    }

    private static byte[] frame(int declaredLength, int type, byte[] payload) {
        return ByteBuffer.allocate(5 + payload.length).putInt(declaredLength).put((byte) type).put(payload).array();
    }

    private static final String DIALER = "tcpx4j dialer";

    /** The PROOF an attacker sends, given its HELLO's nonce and the engine's CHALLENGE. */
    private interface Prover {
        byte[] proof(byte[] dialerNonce, ControlFrame.Challenge c);
    }

    /** HELLO, CHALLENGE, the prover's PROOF and {@code behind}: REJECT(NOT_ALLOWED), then the close. */
    private void refusedAfterProof(HostileClient c, String name, Prover prover, byte[] behind) throws Exception {
        byte[] nonce = c.hello(name);
        ControlFrame.Challenge ch = c.challenge();
        c.writer.proof(prover.proof(nonce, ch));
        c.flush();
        if (behind != null) {
            c.raw(behind);
        }
        ControlFrame f = c.next(Duration.ofSeconds(10));
        assertThat(f).as("answer to a wrong proof").isInstanceOf(ControlFrame.Reject.class);
        assertThat(((ControlFrame.Reject) f).status()).isEqualTo(NOT_ALLOWED);
        assertThat(c.next(Duration.ofSeconds(10))).as("then the stream closes, nothing else").isNull();
    }

    @Test
    void wrongProofsAreRejectedBeforeAnythingMoves() throws Exception {
        byte[] wrong = secret();
        wrong[0] ^= 1;
        try (HostileClient c = connect()) {
            // a READ pipelined behind the PROOF gets no answer
            refusedAfterProof(c, "mallory", (n, ch) -> HostileClient.proof(wrong, DIALER, n, ch.nonce(), "mallory", ch.name()),
                    readFrame(1, new long[] {region}, new long[] {REGION}));
        }
        // a READ pipelined behind the HELLO, before any proof: at most the CHALLENGE, then the close
        try (HostileClient c = connect()) {
            c.writer.hello("mallory", 1, new byte[ControlFrame.NONCE_BYTES], 1, 0);
            c.writer.read(1, 0, 0, new long[] {region}, new long[] {REGION}, 1);
            c.flush();
            ControlFrame f = c.next(Duration.ofSeconds(10));
            if (f instanceof ControlFrame.Challenge) {
                f = c.next(Duration.ofSeconds(10));
            }
            assertThat(f).as("READ instead of PROOF: dropped, nothing answered").isNull();
        }
        // the right secret over another name, the acceptor's own proof sent back, a proof of the wrong role
        try (HostileClient c = connect()) {
            refusedAfterProof(c, "mallory", (n, ch) -> HostileClient.proof(secret(), DIALER, n, ch.nonce(), "friend", ch.name()), null);
        }
        try (HostileClient c = connect()) {
            refusedAfterProof(c, "mallory", (n, ch) -> ch.proof(), null);
        }
        try (HostileClient c = connect()) {
            refusedAfterProof(c, "mallory", (n, ch) -> HostileClient.proof(secret(), "tcpx4j acceptor", n, ch.nonce(), "mallory", ch.name()), null);
        }
        // random proofs too
        for (int i = 0; i < 20; i++) {
            try (HostileClient c = connect()) {
                refusedAfterProof(c, "mallory", (n, ch) -> {
                    byte[] random = new byte[ControlFrame.PROOF_BYTES];
                    new SecureRandom().nextBytes(random);
                    return random;
                }, null);
            }
        }
        // the harness has teeth: the same steps with the right secret are admitted
        try (HostileClient c = connect()) {
            assertThat(c.admit("mallory", secret()).handles().length).isEqualTo(1);
        }
    }

    @Test
    void aHonestEngineHoldingAWrongSecretGetsNotAllowed() {
        try (Node liar = new Node(Node.config("liar"))) {
            byte[] bad = secret();
            bad[31] ^= (byte) 0x80;
            liar.engine.loadPeer("target", new ConnInfo("target", info.host(), info.port(), bad).encode());
            liar.engine.loadRemoteMetadata("target", targetRegion.publicMetadata());
            RegisteredMemory src = liar.randomRegion(4096, 3);
            Transfer t = liar.engine.session("target").write(List.of(src.descriptor()), List.of(Node.dram(region, 4096)), "x".getBytes());
            assertThat(Node.await(t, Duration.ofSeconds(10))).isEqualTo(TransferStatus.FAILED);
            assertThat(t.error()).get().extracting(e -> e.code()).isEqualTo(Code.NOT_ALLOWED);
            // the target's proof does not check out under the tampered secret, so the liar stops first
            assertThat(t.error()).get().extracting(Throwable::getMessage).asString()
                    .contains("peer target could not prove it holds the secret from its conn-info");
        }
    }

    /** An honest engine reads from the target through a {@link RecordingProxy}; returns {what it sent, what it got}. */
    private byte[][] recordHonestConnection() throws Exception {
        try (Node witness = new Node(Node.config("witness"));
             RecordingProxy proxy = new RecordingProxy(info.host(), info.port())) {
            witness.engine.loadPeer("target", new ConnInfo("target", info.host(), proxy.port(), secret()).encode());
            target.publish(targetRegion, witness);
            long dst = witness.randomRegion(4096, 9).descriptor().address();
            Transfer r = witness.engine.session("target").read(List.of(Node.dram(dst, 4096)), List.of(Node.dram(region, 4096)), null);
            assertThat(Node.await(r, Duration.ofSeconds(10))).as("honest READ through the relay: %s", r.error()).isEqualTo(TransferStatus.DONE);
            assertThat(Buffers.firstDifference(dst, region, 4096)).isEqualTo(-1);
            return new byte[][] {proxy.fromDialer(), proxy.fromAcceptor()};
        }
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static int type(byte[] frame) {
        return frame[4] & 0xFF;
    }

    private static ControlFrame decode(byte[] frame) {
        io.tcpx4j.domain.protocol.FrameReader r = new io.tcpx4j.domain.protocol.FrameReader();
        r.feed(frame);
        return r.next();
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    @Test
    void theSecretNeverCrossesTheWire() throws Exception {
        byte[][] wire = recordHonestConnection();
        List<byte[]> sent = HostileClient.frames(wire[0]);
        List<byte[]> got = HostileClient.frames(wire[1]);
        assertThat(sent.stream().map(HostilePeerIT::type).toList()).as("what the honest dialer sent")
                .startsWith((int) ControlFrame.HELLO, (int) ControlFrame.PROOF, (int) ControlFrame.HANDLES, (int) ControlFrame.READ_INLINE);
        assertThat(got.stream().map(HostilePeerIT::type).toList()).as("what the target answered")
                .startsWith((int) ControlFrame.CHALLENGE, (int) ControlFrame.HELLO_OK, (int) ControlFrame.HANDLES);
        assertThat(indexOf(wire[0], secret())).as("the secret in the dialer's bytes").isEqualTo(-1);
        assertThat(indexOf(wire[1], secret())).as("the secret in the target's bytes").isEqualTo(-1);
        // the search finds a secret where there is one: the frames with a secret spliced in
        assertThat(indexOf(concat(sent.get(0), secret(), sent.get(1)), secret())).isEqualTo(sent.get(0).length);
        System.out.printf("[hostile] an honest connection's control stream: %d bytes sent, %d received, the secret in neither%n",
                wire[0].length, wire[1].length);
    }

    @Test
    void aRecordedHonestHandshakeReplayedGetsNothing() throws Exception {
        byte[][] wire = recordHonestConnection();
        List<byte[]> sent = HostileClient.frames(wire[0]);
        List<byte[]> got = HostileClient.frames(wire[1]);
        byte[] hello = sent.get(0);
        byte[] proof = sent.get(1);
        assertThat(type(hello)).isEqualTo(ControlFrame.HELLO);
        assertThat(type(proof)).isEqualTo(ControlFrame.PROOF);
        ControlFrame.Hello recordedHello = (ControlFrame.Hello) decode(hello);
        ControlFrame.Challenge recorded = (ControlFrame.Challenge) decode(got.get(0));
        byte[] recordedProof = ((ControlFrame.Proof) decode(proof)).proof();
        // the recorded HELLO and PROOF, several times: each meets a fresh nonce and is refused
        java.util.Set<String> nonces = new java.util.HashSet<>();
        nonces.add(java.util.HexFormat.of().formatHex(recorded.nonce()));
        for (int i = 0; i < 5; i++) {
            try (HostileClient c = connect()) {
                c.raw(concat(hello, proof));
                ControlFrame.Challenge fresh = c.challenge();
                assertThat(nonces.add(java.util.HexFormat.of().formatHex(fresh.nonce()))).as("a fresh nonce").isTrue();
                ControlFrame f = c.next(Duration.ofSeconds(10));
                assertThat(f).isInstanceOf(ControlFrame.Reject.class);
                assertThat(((ControlFrame.Reject) f).status()).isEqualTo(NOT_ALLOWED);
                assertThat(c.next(Duration.ofSeconds(10))).isNull();
            }
        }
        // the honest dialer's whole stream at once (HELLO, PROOF, HANDLES, its READ): nothing is read
        try (HostileClient c = connect()) {
            c.raw(wire[0]);
            c.challenge();
            assertThat(c.next(Duration.ofSeconds(10))).isInstanceOf(ControlFrame.Reject.class);
            assertThat(c.next(Duration.ofSeconds(10))).isNull();
        }
        // everything else the transcript offers: the recorded proofs under the recorded nonce and our name,
        // the target's recorded proof as ours, the recorded proof with the fresh nonce's bytes swapped in
        try (HostileClient c = connect()) {
            c.writer.hello("mallory", 1, recordedHello.nonce(), 1, 0);
            c.flush();
            c.challenge();
            c.writer.proof(recordedProof);
            c.flush();
            assertThat(c.next(Duration.ofSeconds(10))).isInstanceOf(ControlFrame.Reject.class);
            assertThat(c.next(Duration.ofSeconds(10))).isNull();
        }
        try (HostileClient c = connect()) {
            c.raw(hello);
            c.challenge();
            c.writer.proof(recorded.proof());
            c.flush();
            assertThat(c.next(Duration.ofSeconds(10))).isInstanceOf(ControlFrame.Reject.class);
            assertThat(c.next(Duration.ofSeconds(10))).isNull();
        }
        try (HostileClient c = connect()) {
            c.raw(hello);
            ControlFrame.Challenge fresh = c.challenge();
            byte[] mixed = recordedProof.clone();
            System.arraycopy(fresh.nonce(), 0, mixed, 0, 16);
            c.writer.proof(mixed);
            c.flush();
            assertThat(c.next(Duration.ofSeconds(10))).isInstanceOf(ControlFrame.Reject.class);
            assertThat(c.next(Duration.ofSeconds(10))).isNull();
        }
    }

    /** What a dial of a fake acceptor gave: the dialer's transfer, and every byte it sent after its HELLO. */
    private record FakeDial(Transfer transfer, byte[] afterHello) {
    }

    /**
     * An engine ("victim") dials a socket that holds no secret, reads the HELLO, answers {@code answer}
     * and then records what else comes until the victim closes.
     */
    private static FakeDial dialFakeAcceptor(byte[] answer) throws Exception {
        byte[] fakeSecret = new byte[ConnInfo.SECRET_BYTES];
        new SecureRandom().nextBytes(fakeSecret);
        try (java.net.ServerSocket fake = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
             Node victim = new Node(Node.config("victim"))) {
            java.util.concurrent.CompletableFuture<byte[]> afterHello = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try (java.net.Socket s = fake.accept()) {
                    s.setSoTimeout(15_000);
                    io.tcpx4j.domain.protocol.FrameReader r = new io.tcpx4j.domain.protocol.FrameReader();
                    byte[] buf = new byte[4096];
                    ControlFrame f = null;
                    while (f == null) {
                        int n = s.getInputStream().read(buf);
                        if (n < 0) {
                            throw new AssertionError("no HELLO");
                        }
                        r.feed(java.util.Arrays.copyOf(buf, n));
                        f = r.next();
                    }
                    assertThat(f).isInstanceOf(ControlFrame.Hello.class);
                    s.getOutputStream().write(answer);
                    // whatever the dialer sends from here on, until it closes
                    return s.getInputStream().readAllBytes();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            victim.engine.loadPeer("impostor", new ConnInfo("impostor", "127.0.0.1", fake.getLocalPort(), fakeSecret).encode());
            victim.engine.loadRemoteMetadata("impostor", new io.tcpx4j.domain.protocol.RegionMetadata("impostor",
                    Node.dram(1 << 20, 4096)).encode());
            long dst = victim.randomRegion(4096, 5).descriptor().address();
            Transfer t = victim.engine.session("impostor").read(List.of(Node.dram(dst, 4096)), List.of(Node.dram(1 << 20, 4096)), null);
            assertThat(Node.await(t, Duration.ofSeconds(10))).as("the victim's READ").isEqualTo(TransferStatus.FAILED);
            return new FakeDial(t, afterHello.get(15, java.util.concurrent.TimeUnit.SECONDS));
        }
    }

    @Test
    void aFakeAcceptorFailsTheDialerNotAllowedBeforeItSendsAProof() throws Exception {
        io.tcpx4j.domain.protocol.FrameWriter w = new io.tcpx4j.domain.protocol.FrameWriter();
        byte[] nonce = new byte[ControlFrame.NONCE_BYTES];
        byte[] proof = new byte[ControlFrame.PROOF_BYTES];
        new SecureRandom().nextBytes(nonce);
        new SecureRandom().nextBytes(proof);
        w.challenge("impostor", nonce, proof);
        ByteBuffer p = w.pending();
        byte[] challenge = new byte[p.remaining()];
        p.get(challenge);
        FakeDial d = dialFakeAcceptor(challenge);
        assertThat(d.transfer().error()).get().extracting(e -> e.code()).isEqualTo(Code.NOT_ALLOWED);
        assertThat(d.transfer().error()).get().extracting(Throwable::getMessage).asString()
                .contains("peer impostor could not prove it holds the secret from its conn-info");
        assertThat(d.afterHello()).as("bytes the dialer sent after the CHALLENGE").isEmpty();
    }

    @Test
    void aFakeAcceptorAnnouncingAHugeFrameIsDroppedAtOnce() throws Exception {
        // 2 MiB announced, 3 bytes sent: the dialer caps frames at 1 KiB until the acceptor proved the secret
        byte[] answer = ByteBuffer.allocate(8).putInt(2 << 20).put(ControlFrame.CHALLENGE).put(new byte[3]).array();
        FakeDial d = dialFakeAcceptor(answer);
        assertThat(d.transfer().error()).get().extracting(Throwable::getMessage).asString().contains("frame length");
        assertThat(d.afterHello()).isEmpty();
    }

    @Test
    void truncatedHandshakeFramesFramesBeforeHelloGarbageAndOversizedFramesAreDropped() throws Exception {
        // HELLO cut short where the nonce should be, the frame length consistent with the cut
        ByteBuffer hello = ByteBuffer.allocate(2 + 1 + 7 + 8).putShort((short) ControlFrame.PROTOCOL_VERSION).put((byte) 7).put("mallory".getBytes()).putLong(1);
        try (HostileClient c = connect()) {
            c.raw(frame(1 + hello.capacity(), ControlFrame.HELLO, hello.array()));
            assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("HELLO without a nonce").isTrue();
        }
        // PROOF cut short, the frame length consistent with the cut
        try (HostileClient c = connect()) {
            c.hello("mallory");
            c.challenge();
            c.raw(frame(1 + 16, ControlFrame.PROOF, new byte[16]));
            assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("PROOF of 16 bytes").isTrue();
        }
        // a PROOF without a HELLO
        try (HostileClient c = connect()) {
            c.writer.proof(new byte[ControlFrame.PROOF_BYTES]);
            c.flush();
            assertThat(c.next(Duration.ofSeconds(10))).as("PROOF before HELLO: dropped, nothing answered").isNull();
        }
        // a READ of the whole region before any HELLO
        try (HostileClient c = connect()) {
            c.writer.read(1, 0, 0, new long[] {region}, new long[] {REGION}, 1);
            c.flush();
            assertThat(c.next(Duration.ofSeconds(10))).as("READ before HELLO: dropped, nothing answered").isNull();
        }
        // lengths an unauthenticated peer may not announce (the cap is 1 KiB), or may never
        for (int len : new int[] {1025, 16 * 1024 * 1024, Integer.MAX_VALUE, -1, 0}) {
            try (HostileClient c = connect()) {
                c.raw(ByteBuffer.allocate(4).putInt(len).array());
                assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("length prefix %d before HELLO", len).isTrue();
            }
        }
        // random garbage
        SecureRandom rnd = new SecureRandom();
        for (int i = 0; i < 10; i++) {
            byte[] junk = new byte[1 + rnd.nextInt(4096)];
            rnd.nextBytes(junk);
            junk[0] = 0; // a plausible length prefix, so the body is parsed
            try (HostileClient c = connect()) {
                c.raw(junk);
                ControlFrame f;
                do {
                    f = c.next(Duration.ofSeconds(10));
                } while (f instanceof ControlFrame.Reject); // at most a REJECT, then the close
                assertThat(f).as("garbage %d", i).isNull();
            }
        }
        // after admission: a frame longer than the protocol allows, and an unknown frame type
        try (HostileClient c = connect()) {
            c.admit("mallory", secret());
            c.raw(ByteBuffer.allocate(4).putInt(ControlFrame.MAX_FRAME + 1).array());
            assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("oversized frame after HELLO").isTrue();
        }
        try (HostileClient c = connect()) {
            c.admit("mallory", secret());
            c.raw(frame(1 + 3, 99, new byte[3]));
            assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("unknown frame type").isTrue();
        }
    }

    @Test
    void truncatedFramesAndSilentSocketsAreDroppedNotKept() throws Exception {
        byte[] hello;
        try (HostileClient probe = connect()) {
            probe.writer.hello("mallory", 1, new byte[ControlFrame.NONCE_BYTES], 1, 0);
            ByteBuffer p = probe.writer.pending();
            hello = new byte[p.remaining()];
            p.get(hello);
            probe.writer.compact();
        }
        // half a HELLO, then the attacker goes away
        try (HostileClient c = connect()) {
            c.raw(java.util.Arrays.copyOf(hello, hello.length / 2));
        }
        // half a HELLO, then silence: the connect timeout (2 s here) ends it
        long t0 = System.nanoTime();
        try (HostileClient c = connect()) {
            c.raw(java.util.Arrays.copyOf(hello, hello.length / 2));
            assertThat(c.droppedWithin(Duration.ofSeconds(8))).as("half a frame then silence").isTrue();
        }
        // nothing at all
        try (HostileClient c = connect()) {
            assertThat(c.droppedWithin(Duration.ofSeconds(8))).as("a silent socket").isTrue();
        }
        System.out.printf("[hostile] silent sockets dropped after %d ms (connect timeout 2000 ms)%n", (System.nanoTime() - t0) / 2_000_000);
        // admitted, then half a READ and silence: the peer timeout (5 s) would end it; we close first
        try (HostileClient c = connect()) {
            ControlFrame.Handles h = c.admit("mallory", secret());
            c.openDataChannel(h);
            byte[] read = readFrame(1, new long[] {region}, new long[] {16});
            c.raw(java.util.Arrays.copyOf(read, read.length - 3));
        }
    }

    private static byte[] readFrame(long xfer, long[] a, long[] l) {
        io.tcpx4j.domain.protocol.FrameWriter w = new io.tcpx4j.domain.protocol.FrameWriter();
        w.read(xfer, 0, 0, a, l, a.length);
        ByteBuffer p = w.pending();
        byte[] b = new byte[p.remaining()];
        p.get(b);
        return b;
    }

    /** Ranges no peer may touch: around, across and far outside the one registered region. */
    private long[][] badRanges() {
        return new long[][] {
                {region - 1, 16},                // starts one byte before
                {regionEnd - 8, 16},             // runs past the end
                {block, GUARD},                  // the guard band below
                {regionEnd, 1},                  // one byte after
                {region, REGION + 1L},           // one byte too long
                {-16L, 32},                      // wraps around the address space
                {region + 16, Long.MAX_VALUE},   // overflows
                {0, 8},                          // address zero
                {regionEnd + 4096, 0},           // empty, but outside
        };
    }

    @Test
    void readsOutsideRegisteredMemoryAreRefusedAndTheConnectionStaysUsable() throws Exception {
        try (HostileClient c = connect()) {
            c.admit("mallory", secret());
            long xfer = 100;
            for (long[] r : badRanges()) {
                c.writer.read(++xfer, 0, 0, new long[] {r[0]}, new long[] {r[1]}, 1);
                c.flush();
                ControlFrame f = c.next(Duration.ofSeconds(10));
                assertThat(f).as("READ [0x%x, +%d)", r[0], r[1]).isEqualTo(new ControlFrame.ReadNack(xfer, NOT_ALLOWED));
                REFUSED.incrementAndGet();
            }
            // one good range and one bad one: refused as a whole
            c.writer.read(++xfer, 0, 0, new long[] {region, regionEnd}, new long[] {64, 64}, 2);
            c.flush();
            assertThat(c.next(Duration.ofSeconds(10))).isEqualTo(new ControlFrame.ReadNack(xfer, NOT_ALLOWED));
        }
    }

    @Test
    void writesOutsideRegisteredMemoryAreRefusedTheirDataDrainedAndNothingLands() throws Exception {
        int chunk = 64 * 1024;
        long payload = Buffers.allocate(chunk);
        try (HostileClient c = connect()) {
            Buffers.fill(payload, chunk, (byte) 0x66);
            ControlFrame.Handles h = c.admit("mallory", secret());
            c.openDataChannel(h);
            long xfer = 0;
            for (long[] r : badRanges()) {
                long len = Math.min(r[1], chunk); // what we really push; the announcement says r[1]
                if (r[1] > chunk) {
                    continue; // announced lengths beyond what we push are covered below
                }
                c.writer.write(++xfer, chunk, 0, 0, "evil".getBytes(), new long[] {r[0]}, new long[] {r[1]}, 1);
                c.flush();
                if (len > 0) {
                    c.sendData(payload, (int) len);
                }
                ControlFrame f = c.next(Duration.ofSeconds(10));
                assertThat(f).as("WRITE [0x%x, +%d)", r[0], r[1]).isEqualTo(new ControlFrame.WriteAck(xfer, NOT_ALLOWED));
                REFUSED.incrementAndGet();
            }
            // a good range and a bad one: refused as a whole, the good one untouched too
            c.writer.write(++xfer, chunk, 0, 0, "evil".getBytes(), new long[] {region, block}, new long[] {4096, 4096}, 2);
            c.flush();
            c.sendData(payload, 4096);
            c.sendData(payload, 4096);
            assertThat(c.next(Duration.ofSeconds(10))).isEqualTo(new ControlFrame.WriteAck(xfer, NOT_ALLOWED));
            // the same two descriptors packed into one chunk: drained as one, refused as a whole
            c.writer.write(++xfer, chunk, 4096, 8192, "evil".getBytes(), new long[] {region, block}, new long[] {4096, 4096}, 2);
            c.flush();
            c.sendData(payload, 8192);
            assertThat(c.next(Duration.ofSeconds(10))).isEqualTo(new ControlFrame.WriteAck(xfer, NOT_ALLOWED));
            // the harness is honest: a WRITE inside the region lands (and is then part of the expectation)
            c.writer.write(++xfer, chunk, 0, 0, null, new long[] {region + 100}, new long[] {1000}, 1);
            c.flush();
            c.sendData(payload, 1000);
            assertThat(c.next(Duration.ofSeconds(10))).isEqualTo(new ControlFrame.WriteAck(xfer, MALLORY_OK));
            java.util.Arrays.fill(expected, GUARD + 100, GUARD + 1100, (byte) 0x66);
            // and a packed one: two descriptors in one chunk, scattered to their places
            c.writer.write(++xfer, chunk, 1000, chunk, null, new long[] {region + 3000, region + 2000}, new long[] {500, 300}, 2);
            c.flush();
            c.sendData(payload, 800);
            assertThat(c.next(Duration.ofSeconds(10))).isEqualTo(new ControlFrame.WriteAck(xfer, MALLORY_OK));
            java.util.Arrays.fill(expected, GUARD + 3000, GUARD + 3500, (byte) 0x66);
            java.util.Arrays.fill(expected, GUARD + 2000, GUARD + 2300, (byte) 0x66);
            // packed chunks larger than this side's staging buffers of host memory: refused, drained, in step
            c.writer.write(++xfer, 512 * 1024, 4096, 256 * 1024, null, new long[] {region + 8192, region + 16384},
                    new long[] {4096, 4096}, 2);
            c.flush();
            c.sendData(payload, 8192);
            assertThat(c.next(Duration.ofSeconds(10))).isEqualTo(new ControlFrame.WriteAck(xfer,
                    RefusalCode.NOT_SUPPORTED.wire()));
        } finally {
            Buffers.free(payload, chunk);
        }
    }

    @Test
    void inlineWritesAndReadsOutsideRegisteredMemoryAreRefusedAndNothingLandsOrLeaks() throws Exception {
        int most = 64 * 1024;
        long payload = Buffers.allocate(most);
        try (HostileClient c = connect()) {
            Buffers.fill(payload, most, (byte) 0x69);
            c.admit("mallory", secret());
            long xfer = 200;
            for (long[] r : badRanges()) {
                if (r[1] > most) {
                    continue; // a frame carries every byte it announces; a lie about that is below
                }
                c.writer.writeInline(++xfer, "evil".getBytes(), new long[] {r[0]}, new long[] {r[1]}, 1,
                        new long[] {payload}, (int) r[1]);
                c.writer.readInline(++xfer, 0, 0, new long[] {r[0]}, new long[] {r[1]}, 1);
                c.flush();
                assertThat(c.next(Duration.ofSeconds(10))).as("WRITE_INLINE [0x%x, +%d)", r[0], r[1])
                        .isEqualTo(new ControlFrame.WriteAck(xfer - 1, NOT_ALLOWED));
                assertThat(c.next(Duration.ofSeconds(10))).as("READ_INLINE [0x%x, +%d)", r[0], r[1])
                        .isEqualTo(new ControlFrame.ReadNack(xfer, NOT_ALLOWED));
                REFUSED.addAndGet(2);
            }
            // a good range and a bad one: refused as a whole, the good one untouched too
            c.writer.writeInline(++xfer, null, new long[] {region, block}, new long[] {4096, 4096}, 2,
                    new long[] {payload, payload}, 8192);
            c.flush();
            assertThat(c.next(Duration.ofSeconds(10))).isEqualTo(new ControlFrame.WriteAck(xfer, NOT_ALLOWED));
            // the harness is honest: inside the region a WRITE_INLINE lands and a READ_INLINE is answered
            c.writer.writeInline(++xfer, null, new long[] {region + 200}, new long[] {1000}, 1, new long[] {payload}, 1000);
            c.writer.readInline(++xfer, 0, 0, new long[] {region + 200}, new long[] {1000}, 1);
            c.flush();
            assertThat(c.next(Duration.ofSeconds(10))).isEqualTo(new ControlFrame.WriteAck(xfer - 1, MALLORY_OK));
            java.util.Arrays.fill(expected, GUARD + 200, GUARD + 1200, (byte) 0x69);
            ControlFrame reply = c.next(Duration.ofSeconds(10));
            assertThat(reply).isInstanceOf(ControlFrame.ReadReply.class);
            ByteBuffer replied = ((ControlFrame.ReadReply) reply).data();
            assertThat(replied).isEqualTo(ByteBuffer.wrap(java.util.Arrays.copyOfRange(expected, GUARD + 200, GUARD + 1200)));
            // ranges of more bytes than the frame carries: malformed, the attacker is dropped
            ByteBuffer lie = ByteBuffer.allocate(8 + 1 + 4 + 16 + 16).putLong(++xfer).put((byte) 0).putInt(1)
                    .putLong(region).putLong(4096).put(new byte[16]);
            c.raw(frame(1 + lie.capacity(), ControlFrame.WRITE_INLINE, lie.array()));
            assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("WRITE_INLINE announcing 4096 bytes, carrying 16").isTrue();
        } finally {
            Buffers.free(payload, most);
        }
    }

    @Test
    void dataBeyondWhatWasAnnouncedOrBadChunkingDropsTheAttacker() throws Exception {
        int big = 64 * 1024;
        long payload = Buffers.allocate(big);
        try {
            Buffers.fill(payload, big, (byte) 0x77);
            // announce the last 4 KiB of the region, push 64 KiB: the receive must not overrun the guard
            try (HostileClient c = connect()) {
                c.openDataChannel(c.admit("mallory", secret()));
                c.writer.write(1, big, 0, 0, null, new long[] {regionEnd - 4096}, new long[] {4096}, 1);
                c.flush();
                try {
                    c.sendData(payload, big);
                } catch (RuntimeException | AssertionError dropped) {
                    // the target may reset the data channel before our send completes
                }
                assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("oversized message behind a WRITE").isTrue();
            }
            // chunk sizes no engine announces
            for (int chunk : new int[] {0, -1, EngineConfig.MAX_CHUNK + 1}) {
                try (HostileClient c = connect()) {
                    c.openDataChannel(c.admit("mallory", secret()));
                    c.writer.write(1, chunk, 0, 0, null, new long[] {region}, new long[] {4096}, 1);
                    c.flush();
                    assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("chunk size %d", chunk).isTrue();
                }
            }
            // packings no engine announces (limit, packed chunk): negative, above the chunk size, a limit above
            // its packed chunk, a packed chunk without a limit
            for (int[] pack : new int[][] {{-1, 4096}, {8192, 8192}, {4096, 8192}, {200, 100}, {0, 4096}}) {
                try (HostileClient c = connect()) {
                    c.openDataChannel(c.admit("mallory", secret()));
                    c.writer.write(1, 4096, pack[0], pack[1], null, new long[] {region, region + 100},
                            new long[] {50, 50}, 2);
                    c.flush();
                    assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("packing %d in chunks of %d", pack[0],
                            pack[1]).isTrue();
                }
            }
            // acknowledgements and data for transfers that do not exist, HANDLES twice
            try (HostileClient c = connect()) {
                c.openDataChannel(c.admit("mallory", secret()));
                c.writer.writeAck(999, RefusalCode.NONE);
                c.flush();
                assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("WRITE_ACK for nothing").isTrue();
            }
            try (HostileClient c = connect()) {
                c.openDataChannel(c.admit("mallory", secret()));
                c.writer.readData(999, 4096, 0, 0);
                c.flush();
                assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("READ_DATA for nothing").isTrue();
            }
            try (HostileClient c = connect()) {
                c.openDataChannel(c.admit("mallory", secret()));
                c.writer.handles(new byte[][] {new byte[128]});
                c.flush();
                assertThat(c.droppedWithin(Duration.ofSeconds(10))).as("HANDLES twice").isTrue();
            }
            // a WRITE announced, half its data, then gone
            try (HostileClient c = connect()) {
                c.openDataChannel(c.admit("mallory", secret()));
                c.writer.write(1, 4096, 0, 0, "evil".getBytes(), new long[] {region}, new long[] {8192}, 1);
                c.flush();
                c.sendData(payload, 4096);
            }
            either(GUARD, GUARD + 4096, (byte) 0x77); // the first chunk was in range: it may have landed
            assertThat(Node.eventually(Duration.ofSeconds(5), () -> target.stats().liveOperations() == 0)).isTrue();
        } finally {
            Buffers.free(payload, big);
        }
    }
}
