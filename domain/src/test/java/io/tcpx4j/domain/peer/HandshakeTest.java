package io.tcpx4j.domain.peer;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameReader;
import io.tcpx4j.domain.protocol.FrameWriter;
import io.tcpx4j.domain.protocol.RefusalCode;
import org.junit.jupiter.api.Test;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The challenge-response handshake on its own: the MAC against one computed here from its definition,
 * and both sides driven frame by frame through the real encoder and decoder, honest and not.
 */
class HandshakeTest {

    private final LocalIdentity acceptorId = new LocalIdentity("decode-0");
    private final LocalIdentity dialerId = new LocalIdentity("prefill-0");

    /** HMAC-SHA256 over u32-length-prefixed fields, written out from the protocol's definition. */
    private static byte[] referenceMac(byte[] key, byte[]... fields) throws Exception {
        ByteArrayOutputStream in = new ByteArrayOutputStream();
        for (byte[] f : fields) {
            in.write(ByteBuffer.allocate(4).putInt(f.length).array());
            in.write(f);
        }
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(in.toByteArray());
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(int fill, int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) fill);
        return b;
    }

    @Test
    void proofIsTheHmacOfLabelNoncesAndNamesEachLengthPrefixed() throws Exception {
        byte[] key = bytes(0x11, 32);
        byte[] nd = bytes(0x22, 32);
        byte[] na = bytes(0x33, 32);
        for (String label : new String[] {Handshake.ACCEPTOR, Handshake.DIALER}) {
            assertThat(Handshake.proof(key, label, nd, na, "prefill-0", "decode-0"))
                    .isEqualTo(referenceMac(key, utf8(label), nd, na, utf8("prefill-0"), utf8("decode-0")));
        }
        // a fixed vector, so that a change of the input layout cannot go unnoticed on both sides at once
        assertThat(HexFormat.of().formatHex(referenceMac(key, utf8("tcpx4j acceptor"), nd, na, utf8("a"), utf8("b"))))
                .isEqualTo(HexFormat.of().formatHex(Handshake.proof(key, Handshake.ACCEPTOR, nd, na, "a", "b")));
    }

    @Test
    void everyInputChangesTheProof() {
        byte[] key = bytes(1, 32);
        byte[] nd = bytes(2, 32);
        byte[] na = bytes(3, 32);
        byte[] p = Handshake.proof(key, Handshake.DIALER, nd, na, "ab", "c");
        byte[] otherKey = key.clone();
        otherKey[31] ^= 1;
        byte[] otherNd = nd.clone();
        otherNd[0] ^= 1;
        byte[] otherNa = na.clone();
        otherNa[17] ^= 0x40;
        assertThat(Handshake.proof(otherKey, Handshake.DIALER, nd, na, "ab", "c")).as("wrong key").isNotEqualTo(p);
        assertThat(Handshake.proof(key, Handshake.ACCEPTOR, nd, na, "ab", "c")).as("other role").isNotEqualTo(p);
        assertThat(Handshake.proof(key, Handshake.DIALER, na, nd, "ab", "c")).as("nonces swapped").isNotEqualTo(p);
        assertThat(Handshake.proof(key, Handshake.DIALER, otherNd, na, "ab", "c")).as("dialer nonce").isNotEqualTo(p);
        assertThat(Handshake.proof(key, Handshake.DIALER, nd, otherNa, "ab", "c")).as("acceptor nonce").isNotEqualTo(p);
        assertThat(Handshake.proof(key, Handshake.DIALER, nd, na, "c", "ab")).as("names swapped").isNotEqualTo(p);
        // the length prefixes keep a shifted boundary between the names from giving the same input
        assertThat(Handshake.proof(key, Handshake.DIALER, nd, na, "a", "bc")).as("boundary moved").isNotEqualTo(p);
    }

    private static List<ControlFrame> sent(FrameWriter w) {
        ByteBuffer p = w.pending();
        byte[] b = new byte[p.remaining()];
        p.get(b);
        w.compact();
        FrameReader r = new FrameReader();
        r.feed(b);
        List<ControlFrame> frames = new ArrayList<>();
        ControlFrame f;
        while ((f = r.next()) != null) {
            frames.add(f);
        }
        return frames;
    }

    private static <F> F only(List<ControlFrame> frames, Class<F> type) {
        assertThat(frames).hasSize(1);
        assertThat(frames.get(0)).isInstanceOf(type);
        return type.cast(frames.get(0));
    }

    @Test
    void anHonestPairProvesTheSecretBothWaysWithoutSendingIt() {
        Handshake dialer = Handshake.dialer(dialerId, "decode-0", acceptorId.secret());
        Handshake acceptor = Handshake.acceptor(acceptorId);
        FrameWriter d = new FrameWriter();
        FrameWriter a = new FrameWriter();
        dialer.hello(d, 2, 4096);
        ControlFrame.Hello hello = only(sent(d), ControlFrame.Hello.class);
        assertThat(hello.name()).isEqualTo("prefill-0");
        assertThat(hello.nonce()).isNotEqualTo(acceptorId.secret());
        assertThat(acceptor.challenge(hello, a)).isNull();
        ControlFrame.Challenge challenge = only(sent(a), ControlFrame.Challenge.class);
        assertThat(challenge.name()).isEqualTo("decode-0");
        assertThat(challenge.nonce()).isNotEqualTo(hello.nonce());
        byte[] proof = dialer.answer(challenge);
        assertThat(proof).isNotNull();
        assertThat(proof).isNotEqualTo(challenge.proof()).isNotEqualTo(acceptorId.secret());
        assertThat(acceptor.check(new ControlFrame.Proof(proof))).isNull();
        assertThat(acceptor.hello()).isSameAs(hello);
    }

    @Test
    void aDialerWithTheWrongSecretIsRefusedNotAllowed() {
        byte[] wrong = acceptorId.secret();
        wrong[0] ^= 1;
        Handshake acceptor = Handshake.acceptor(acceptorId);
        FrameWriter d = new FrameWriter();
        FrameWriter a = new FrameWriter();
        Handshake dialer = Handshake.dialer(dialerId, "decode-0", wrong);
        dialer.hello(d, 1, 4096);
        ControlFrame.Hello hello = only(sent(d), ControlFrame.Hello.class);
        assertThat(acceptor.challenge(hello, a)).isNull();
        ControlFrame.Challenge c = only(sent(a), ControlFrame.Challenge.class);
        // the honest acceptor's proof does not check out under the wrong secret: the dialer stops there
        assertThat(dialer.answer(c)).isNull();
        // a dialer that sends a proof anyway (computed with the wrong secret) is refused
        byte[] forged = Handshake.proof(wrong, Handshake.DIALER, hello.nonce(), c.nonce(), "prefill-0", "decode-0");
        Handshake.Refusal r = acceptor.check(new ControlFrame.Proof(forged));
        assertThat(r).isNotNull();
        assertThat(r.code()).isEqualTo(RefusalCode.NOT_ALLOWED);
        // the same proof under the right secret passes: the refusal above is the secret's doing
        byte[] right = Handshake.proof(acceptorId.secret(), Handshake.DIALER, hello.nonce(), c.nonce(), "prefill-0",
                "decode-0");
        assertThat(acceptor.check(new ControlFrame.Proof(right))).isNull();
    }

    @Test
    void theAcceptorsOwnProofOrAReplayedProofIsRefused() {
        Handshake dialer = Handshake.dialer(dialerId, "decode-0", acceptorId.secret());
        Handshake first = Handshake.acceptor(acceptorId);
        FrameWriter d = new FrameWriter();
        FrameWriter a = new FrameWriter();
        dialer.hello(d, 1, 4096);
        ControlFrame.Hello hello = only(sent(d), ControlFrame.Hello.class);
        first.challenge(hello, a);
        ControlFrame.Challenge c = only(sent(a), ControlFrame.Challenge.class);
        byte[] proof = dialer.answer(c);
        assertThat(first.check(new ControlFrame.Proof(proof))).isNull();
        // swapped roles: the acceptor's proof handed back as the dialer's
        assertThat(first.check(new ControlFrame.Proof(c.proof()))).isNotNull();
        // replay: the same HELLO and PROOF to a new connection meet a fresh acceptor nonce
        Handshake second = Handshake.acceptor(acceptorId);
        assertThat(second.challenge(hello, a)).isNull();
        ControlFrame.Challenge c2 = only(sent(a), ControlFrame.Challenge.class);
        assertThat(c2.nonce()).isNotEqualTo(c.nonce());
        Handshake.Refusal r = second.check(new ControlFrame.Proof(proof));
        assertThat(r).isNotNull();
        assertThat(r.code()).isEqualTo(RefusalCode.NOT_ALLOWED);
        // a PROOF before any HELLO proves nothing
        assertThat(Handshake.acceptor(acceptorId).check(new ControlFrame.Proof(proof))).isNotNull();
    }

    @Test
    void aFakeAcceptorOrAReplayedChallengeFailsTheDialer() {
        Handshake dialer = Handshake.dialer(dialerId, "decode-0", acceptorId.secret());
        FrameWriter d = new FrameWriter();
        dialer.hello(d, 1, 4096);
        ControlFrame.Hello hello = only(sent(d), ControlFrame.Hello.class);
        // an acceptor that does not hold the secret: random proof
        byte[] random = new LocalIdentity("x").nonce();
        assertThat(dialer.answer(new ControlFrame.Challenge("decode-0", new LocalIdentity("y").nonce(), random))).isNull();
        // a CHALLENGE recorded from an honest acceptor in another handshake: its proof covers another nonce
        Handshake other = Handshake.dialer(dialerId, "decode-0", acceptorId.secret());
        FrameWriter d2 = new FrameWriter();
        other.hello(d2, 1, 4096);
        FrameWriter a = new FrameWriter();
        Handshake.acceptor(acceptorId).challenge(only(sent(d2), ControlFrame.Hello.class), a);
        ControlFrame.Challenge recorded = only(sent(a), ControlFrame.Challenge.class);
        assertThat(other.answer(recorded)).as("the handshake it belongs to").isNotNull();
        assertThat(dialer.answer(recorded)).as("replayed into this one").isNull();
        // an acceptor of another name
        assertThatThrownBy(() -> dialer.answer(new ControlFrame.Challenge("decode-1", random, random)))
                .isInstanceOf(TransferException.class).hasMessageContaining("dialed decode-0 but decode-1 answered");
        assertThat(hello.nonce()).hasSize(ControlFrame.NONCE_BYTES);
    }

    @Test
    void aHelloOfAnotherVersionOurOwnNameOrNoChannelsIsRefusedWithoutAChallenge() {
        byte[] nonce = dialerId.nonce();
        FrameWriter a = new FrameWriter();
        Handshake.Refusal v1 = Handshake.acceptor(acceptorId).challenge(new ControlFrame.Hello(1, "p", 1, nonce, 1, 0), a);
        assertThat(v1.code()).isEqualTo(RefusalCode.NOT_SUPPORTED);
        Handshake.Refusal self = Handshake.acceptor(acceptorId)
                .challenge(new ControlFrame.Hello(ControlFrame.PROTOCOL_VERSION, "decode-0", 1, nonce, 1, 0), a);
        assertThat(self.code()).isEqualTo(RefusalCode.INVALID_PARAM);
        Handshake.Refusal none = Handshake.acceptor(acceptorId)
                .challenge(new ControlFrame.Hello(ControlFrame.PROTOCOL_VERSION, "p", 1, nonce, 0, 0), a);
        assertThat(none.code()).isEqualTo(RefusalCode.INVALID_PARAM);
        assertThat(a.isEmpty()).as("no CHALLENGE for a refused HELLO").isTrue();
    }
}
