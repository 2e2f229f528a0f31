package io.tcpx4j.domain.protocol;

import io.tcpx4j.api.TransferException;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * What a peer needs to connect to an engine: its name, control address and connection secret.
 * Binary layout (big-endian): magic "TX4C", u8 version 1, name (u8 len + UTF-8), host (u8 len +
 * UTF-8), u16 port, 32-byte secret.
 */
public record ConnInfo(String name, String host, int port, byte[] secret) {

    public static final int SECRET_BYTES = 32;
    private static final int MAGIC = 0x54583443; // "TX4C"
    private static final int VERSION = 1;

    public ConnInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
        if (port < 1 || port > 65535) {
            throw Wire.bad("conn-info", "port " + port);
        }
        if (secret.length != SECRET_BYTES) {
            throw Wire.bad("conn-info", "secret of " + secret.length + " bytes");
        }
        secret = secret.clone();
    }

    @Override
    public byte[] secret() {
        return secret.clone();
    }

    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + Wire.nameSize(name) + Wire.nameSize(host) + 2 + SECRET_BYTES);
        b.putInt(MAGIC).put((byte) VERSION);
        Wire.putName(b, name);
        Wire.putName(b, host);
        b.putShort((short) port).put(secret);
        return b.array();
    }

    public static ConnInfo decode(byte[] bytes) {
        Wire w = Wire.of(bytes, "conn-info");
        if (w.i32() != MAGIC) {
            throw Wire.bad("conn-info", "not a tcpx4j conn-info (bad magic)");
        }
        int version = w.u8();
        if (version != VERSION) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "conn-info version " + version + " (this build reads " + VERSION + ")");
        }
        String name = w.name();
        String host = w.name();
        int port = w.u16();
        byte[] secret = w.bytes(SECRET_BYTES);
        w.end();
        return new ConnInfo(name, host, port, secret);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnInfo c && c.name.equals(name) && c.host.equals(host) && c.port == port
                && Arrays.equals(c.secret, secret);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, host, port, Arrays.hashCode(secret));
    }

    @Override
    public String toString() {
        return "ConnInfo[" + name + "@" + host + ":" + port + "]";
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
