package io.tcpx4j.domain;

import io.tcpx4j.domain.protocol.ConnInfo;

import java.security.MessageDigest;
import java.security.SecureRandom;

/**
 * Who this engine is to its peers: its name, a random incarnation that changes with every start of
 * the process (so a peer can tell a restart from a reconnect), and the connection secret a peer must
 * prove it holds before any data moves.
 *
 * <p>Immutable and thread-safe.
 */
final class LocalIdentity {

    private final String name;
    private final long incarnation;
    private final byte[] secret;

    LocalIdentity(String name) {
        SecureRandom random = new SecureRandom();
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
    byte[] secret() {
        return secret.clone();
    }

    /** Constant-time comparison, so a peer cannot learn the secret byte by byte from timing. */
    boolean secretMatches(byte[] candidate) {
        return MessageDigest.isEqual(secret, candidate);
    }
}
