package io.tcpx4j.domain.peer;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameWriter;
import io.tcpx4j.domain.protocol.RefusalCode;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The control stream's handshake, a mutual challenge-response over the acceptor's connection secret
 * (the secret of its conn-info), which never crosses the wire:
 * <ol>
 *   <li>dialer D to acceptor A: HELLO{version, nameD, incarnationD, nonceD, channels, inline limit};</li>
 *   <li>A checks version, name and channels, then answers CHALLENGE{nameA, nonceA,
 *       proofA = {@link #proof}(secret, {@value #ACCEPTOR}, ...)}; D checks proofA before it says more;</li>
 *   <li>D answers PROOF{proofD = {@link #proof}(secret, {@value #DIALER}, ...)}; A checks it, and only
 *       then admits the connection and answers HELLO_OK (or REJECT).</li>
 * </ol>
 * Both nonces are 32 fresh random bytes per connection, so a proof recorded from one handshake is
 * worth nothing in another: a replayed PROOF meets a new nonceA, a replayed CHALLENGE a new nonceD.
 * The two labels keep one side's proof from serving as the other's. Proofs are compared in constant time.
 *
 * <p>One instance per connection, on one side. <b>Not thread-safe</b>: owned by the engine's agent.
 */
final class Handshake {

    /** Frames a peer may send before it proved it holds our secret. */
    static final int UNAUTHENTICATED_MAX_FRAME = 1024;
    /** MAC label of the acceptor's proof. */
    static final String ACCEPTOR = "tcpx4j acceptor";
    /** MAC label of the dialer's proof. */
    static final String DIALER = "tcpx4j dialer";

    /** Why an incoming HELLO or PROOF is refused: the code sent back in REJECT, and the reason. */
    record Refusal(RefusalCode code, String why) {
        Refusal(Code code, String why) {
            this(RefusalCode.of(code), why);
        }
    }

    private final LocalIdentity self;
    /** The secret both proofs are keyed with: the acceptor's. */
    private final byte[] secret;
    /** This side's fresh nonce. */
    private final byte[] nonce;
    /** The name the dialer dialed (dialer side). */
    private final String dialed;
    /** The HELLO being answered and the proof its sender owes (acceptor side). */
    private ControlFrame.Hello hello;
    private byte[] expected;

    private Handshake(LocalIdentity self, byte[] secret, String dialed) {
        this.self = self;
        this.secret = secret;
        this.nonce = self.nonce();
        this.dialed = dialed;
    }

    /** The dialer's side of a dial to {@code dialed}, whose conn-info holds {@code peerSecret}. */
    static Handshake dialer(LocalIdentity self, String dialed, byte[] peerSecret) {
        return new Handshake(self, peerSecret.clone(), dialed);
    }

    /** The acceptor's side, keyed with this engine's own secret. */
    static Handshake acceptor(LocalIdentity self) {
        return new Handshake(self, self.secret(), null);
    }

    // ------------------------------------------------------------------ dialer

    /** Queues this dialer's HELLO; {@code inlineLimit}: the most bytes this engine takes in one WRITE_INLINE. */
    void hello(FrameWriter writer, int channels, int inlineLimit) {
        writer.hello(self.name(), self.incarnation(), nonce, channels, inlineLimit);
    }

    /**
     * Checks the acceptor's CHALLENGE and returns the PROOF to send, or null when the acceptor could not
     * prove it holds the secret of the dialed conn-info (then nothing more may be sent to it).
     */
    byte[] answer(ControlFrame.Challenge c) {
        if (!c.name().equals(dialed)) {
            throw new TransferException(Code.REMOTE_DISCONNECT, "dialed " + dialed + " but " + c.name() + " answered");
        }
        byte[] want = proof(secret, ACCEPTOR, nonce, c.nonce(), self.name(), dialed);
        if (!MessageDigest.isEqual(want, c.proof())) {
            return null;
        }
        return proof(secret, DIALER, nonce, c.nonce(), self.name(), dialed);
    }

    /** Checks the HELLO_OK answering a dial that asked for {@code channels} channels. */
    void check(ControlFrame.HelloOk ok, int channels) {
        if (!ok.name().equals(dialed)) {
            throw new TransferException(Code.REMOTE_DISCONNECT, "dialed " + dialed + " but " + ok.name() + " answered");
        }
        if (ok.channels() < 1 || ok.channels() > channels) {
            throw new TransferException(Code.REMOTE_DISCONNECT,
                    "peer chose " + ok.channels() + " channels, asked for " + channels);
        }
    }

    // ------------------------------------------------------------------ acceptor

    /**
     * Checks an incoming HELLO; when it may go on, queues the CHALLENGE and returns null, else returns
     * why it is refused.
     */
    Refusal challenge(ControlFrame.Hello h, FrameWriter writer) {
        if (h.version() != ControlFrame.PROTOCOL_VERSION) {
            return new Refusal(Code.NOT_SUPPORTED, "protocol version " + h.version() + ", this engine speaks "
                    + ControlFrame.PROTOCOL_VERSION);
        }
        if (h.name().equals(self.name())) {
            return new Refusal(Code.INVALID_PARAM, "peer uses this engine's own name " + h.name());
        }
        if (h.channels() < 1) {
            return new Refusal(Code.INVALID_PARAM, "no channels");
        }
        hello = h;
        expected = proof(secret, DIALER, h.nonce(), nonce, h.name(), self.name());
        writer.challenge(self.name(), nonce, proof(secret, ACCEPTOR, h.nonce(), nonce, h.name(), self.name()));
        return null;
    }

    /** The HELLO answered by {@link #challenge}. */
    ControlFrame.Hello hello() {
        return hello;
    }

    /** Checks the dialer's PROOF (in constant time); null if it holds our secret. */
    Refusal check(ControlFrame.Proof p) {
        if (expected == null || !MessageDigest.isEqual(expected, p.proof())) {
            return new Refusal(Code.NOT_ALLOWED, "wrong proof of the connection secret");
        }
        return null;
    }

    /** {@code f} as a {@code type}, or REMOTE_DISCONNECT: the handshake's frames come in one order only. */
    static <F extends ControlFrame> F expect(ControlFrame f, Class<F> type) {
        if (!type.isInstance(f)) {
            throw new TransferException(Code.REMOTE_DISCONNECT,
                    "expected " + type.getSimpleName() + ", got " + f.getClass().getSimpleName());
        }
        return type.cast(f);
    }

    /** A peer that dialed an agent of this engine that does not serve it (its conn-info is stale or foreign). */
    static Refusal misdirected(EngineContext ctx, String peer) {
        return new Refusal(Code.INVALID_PARAM, "peer " + peer + " dialed agent " + ctx.agent() + " of " + ctx.name()
                + ", which serves other peers: load " + ctx.name() + "'s current conn-info");
    }

    /** The refusal sent to the loser of a crossing dial. */
    static Refusal duplicate(LocalIdentity self) {
        return new Refusal(RefusalCode.DUPLICATE, "a crossing connection dialed by " + self.name() + " wins");
    }

    // ------------------------------------------------------------------ the MAC

    /**
     * HMAC-SHA256 keyed with {@code secret} over {@code label}, the dialer's nonce, the acceptor's nonce,
     * the dialer's name and the acceptor's name, each preceded by its length as a big-endian u32 so
     * that no two different field lists give the same input.
     */
    static byte[] proof(byte[] secret, String label, byte[] dialerNonce, byte[] acceptorNonce, String dialerName,
                        String acceptorName) {
        byte[][] fields = {label.getBytes(StandardCharsets.UTF_8), dialerNonce, acceptorNonce,
                dialerName.getBytes(StandardCharsets.UTF_8), acceptorName.getBytes(StandardCharsets.UTF_8)};
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            ByteBuffer length = ByteBuffer.allocate(4);
            for (byte[] f : fields) {
                mac.update(length.clear().putInt(f.length).array());
                mac.update(f);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            // every Java SE platform provides HmacSHA256
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
