package io.tcpx4j.domain.protocol;

import io.tcpx4j.api.TransferException;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What a peer needs to connect to an engine: its name, control host, the control port of each of its
 * progress agents, and its connection secret. A dialer uses the port of the agent that serves it,
 * {@link #portFor}. Binary layout (big-endian): magic "TX4C", u8 version, name (u8 len + UTF-8), host
 * (u8 len + UTF-8), then version 1 (one agent): u16 port; version 2: u8 agent count (2..255) and a u16
 * port each; then the 32-byte secret.
 */
public record ConnInfo(String name, String host, List<Integer> ports, byte[] secret) {

    public static final int SECRET_BYTES = 32;
    private static final int MAGIC = 0x54583443; // "TX4C"
    private static final int ONE_AGENT = 1;
    private static final int AGENTS = 2;
    private static final int MAX_AGENTS = 255;

    public ConnInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
        ports = List.copyOf(ports);
        if (ports.isEmpty() || ports.size() > MAX_AGENTS) {
            throw Wire.bad("conn-info", ports.size() + " ports");
        }
        for (int port : ports) {
            if (port < 1 || port > 65535) {
                throw Wire.bad("conn-info", "port " + port);
            }
        }
        if (secret.length != SECRET_BYTES) {
            throw Wire.bad("conn-info", "secret of " + secret.length + " bytes");
        }
        secret = secret.clone();
    }

    /** An engine with one progress agent. */
    public ConnInfo(String name, String host, int port, byte[] secret) {
        this(name, host, List.of(port), secret);
    }

    /**
     * The agent of an engine with {@code agents} agents that serves the peer named {@code peer}: the
     * same on both ends, so a dialer reaches the agent that owns it and a crossing dial from that agent
     * meets it there. {@link String#hashCode()} is fixed by the language, so every build agrees.
     */
    public static int agentFor(String peer, int agents) {
        return Math.floorMod(peer.hashCode(), agents);
    }

    /** The control port of the first agent. */
    public int port() {
        return ports.get(0);
    }

    /** The port a dialer named {@code dialer} connects to: that of the agent serving it. */
    public int portFor(String dialer) {
        return ports.get(agentFor(dialer, ports.size()));
    }

    @Override
    public byte[] secret() {
        return secret.clone();
    }

    public byte[] encode() {
        boolean one = ports.size() == 1;
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + Wire.nameSize(name) + Wire.nameSize(host) + (one ? 0 : 1)
                + 2 * ports.size() + SECRET_BYTES);
        b.putInt(MAGIC).put((byte) (one ? ONE_AGENT : AGENTS));
        Wire.putName(b, name);
        Wire.putName(b, host);
        if (!one) {
            b.put((byte) ports.size());
        }
        for (int port : ports) {
            b.putShort((short) port);
        }
        b.put(secret);
        return b.array();
    }

    public static ConnInfo decode(byte[] bytes) {
        Wire w = Wire.of(bytes, "conn-info");
        if (w.i32() != MAGIC) {
            throw Wire.bad("conn-info", "not a tcpx4j conn-info (bad magic)");
        }
        int version = w.u8();
        if (version != ONE_AGENT && version != AGENTS) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "conn-info version " + version + " (this build reads " + ONE_AGENT + " and " + AGENTS + ")");
        }
        String name = w.name();
        String host = w.name();
        int count = version == ONE_AGENT ? 1 : w.u8();
        if (version == AGENTS && count < 2) {
            throw Wire.bad("conn-info", "version 2 with " + count + " agents");
        }
        Integer[] ports = new Integer[count];
        for (int i = 0; i < count; i++) {
            ports[i] = w.u16();
        }
        byte[] secret = w.bytes(SECRET_BYTES);
        w.end();
        return new ConnInfo(name, host, List.of(ports), secret);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnInfo c && c.name.equals(name) && c.host.equals(host) && c.ports.equals(ports)
                && Arrays.equals(c.secret, secret);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, host, ports, Arrays.hashCode(secret));
    }

    @Override
    public String toString() {
        return "ConnInfo[" + name + "@" + host + ":" + (ports.size() == 1 ? ports.get(0) : ports) + "]";
    }
}
