package io.tcpx4j.domain.peer;

import io.tcpx4j.domain.protocol.ConnInfo;
import io.tcpx4j.domain.protocol.ControlFrame;

import java.security.SecureRandom;

/**
 * Who this engine is to its peers: its name, a random incarnation that changes with every start of
 * the process (so a peer can tell a restart from a reconnect), the connection secret a peer must
 * prove it holds before any data moves, and the source of the handshake's nonces.
 *
 * <p>Immutable and thread-safe.
 */
public final class LocalIdentity {

    private final String name;
    private final long incarnation;
    private final byte[] secret;
    private final SecureRandom random = new SecureRandom();

    public LocalIdentity(String name) {
        byte[] s = new byte[ConnInfo.SECRET_BYTES];
        random.nextBytes(s);
        this.name = name;
        this.secret = s;
        this.incarnation = random.nextLong();
    }

    String name() {
        return name;
    }

    long incarnation() {
        return incarnation;
    }

    /** A copy of the secret, for this engine's conn-info. */
    public byte[] secret() {
        return secret.clone();
    }

    /** A fresh random handshake nonce ({@link ControlFrame#NONCE_BYTES} bytes). */
    byte[] nonce() {
        byte[] n = new byte[ControlFrame.NONCE_BYTES];
        random.nextBytes(n);
        return n;
    }
}
