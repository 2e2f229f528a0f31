package io.tcpx4j.domain.protocol;

import io.tcpx4j.api.TransferException;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Frames of the control stream between two engines. On the wire each frame is {@code u32 length,
 * u8 type, payload} (big-endian; length counts type and payload). Decoding is strict: unknown types,
 * short or long payloads and out-of-range counts are INVALID_PARAM.
 *
 * <p>The data sender is the ordering authority of each direction: a {@link Write} or {@link ReadData}
 * frame announces a chunk sequence before any of its chunks is posted.
 */
public sealed interface ControlFrame {

    /**
     * Version spoken in {@link Hello}: 7 is the challenge-response handshake (HELLO, CHALLENGE, PROOF)
     * with inline transfers (WRITE_INLINE, READ_INLINE, READ_REPLY), each side's inline limit in HELLO
     * and HELLO_OK, and packed chunks of host or device memory whose limit and size travel in WRITE,
     * READ, READ_INLINE and READ_DATA. A HELLO of another version is read only as far as its channel
     * count, so that its sender is refused by version and not as a malformed frame.
     */
    int PROTOCOL_VERSION = 7;
    /** Bytes of a handshake nonce ({@link Hello}, {@link Challenge}). */
    int NONCE_BYTES = 32;
    /** Bytes of a handshake proof (HMAC-SHA256). */
    int PROOF_BYTES = 32;
    /** Largest frame accepted (type + payload). */
    int MAX_FRAME = 16 * 1024 * 1024;
    /** Most descriptors in one WRITE or READ. */
    int MAX_RANGES = 1 << 20;
    /** Largest notification message. */
    int MAX_NOTIFICATION = 1 << 20;
    /** Most data channels per connection. */
    int MAX_CHANNELS = 64;

    byte HELLO = 1, HELLO_OK = 2, REJECT = 3, HANDLES = 4, WRITE = 5, WRITE_ACK = 6, READ = 7, READ_DATA = 8,
            READ_NACK = 9, NOTIF = 10, PING = 11, BYE = 12, CHALLENGE = 13, PROOF = 14, WRITE_INLINE = 15,
            READ_INLINE = 16, READ_REPLY = 17;

    /**
     * Dialer to acceptor: who I am, a fresh nonce, the channels I want, and the most bytes I take in one
     * WRITE_INLINE ({@code inlineLimit}; 0 in a HELLO of another version). Carries no secret.
     */
    record Hello(int version, String name, long incarnation, byte[] nonce, int channels, int inlineLimit)
            implements ControlFrame {
    }

    /**
     * Acceptor to dialer, answering a {@link Hello}: the acceptor's name, its fresh nonce and its proof
     * that it holds the secret of its conn-info (a MAC over both nonces and both names).
     */
    record Challenge(String name, byte[] nonce, byte[] proof) implements ControlFrame {
    }

    /** Dialer to acceptor, answering a {@link Challenge}: the dialer's proof that it holds the acceptor's secret. */
    record Proof(byte[] proof) implements ControlFrame {
    }

    /** Acceptor to dialer: accepted; the channel count both use and the most bytes it takes in one WRITE_INLINE. */
    record HelloOk(String name, long incarnation, int channels, int inlineLimit) implements ControlFrame {
    }

    /** Refusal with a reason, then the stream closes; {@code status}: a {@link RefusalCode#wire()}. */
    record Reject(int status, String message) implements ControlFrame {
    }

    /** The sender's listener handles, one per channel, for the peer's send comms. */
    record Handles(byte[][] handles) implements ControlFrame {
    }

    /**
     * WRITE announcement: remote ranges (on the receiver), chunking, packing (descriptors of at most
     * {@code pack} bytes share chunks of at most {@code packedChunk} bytes; both 0: none) and notification.
     */
    record Write(long xfer, int chunkSize, int pack, int packedChunk, byte[] notification, long[] addresses,
                 long[] lengths)
            implements ControlFrame {
    }

    /**
     * A WRITE whose bytes travel in this frame: remote ranges, notification, then the ranges' bytes back
     * to back ({@code data.remaining()} is the sum of the lengths). Answered by a {@link WriteAck}.
     * Decoded, {@code data} is a view into the {@link FrameReader}'s buffer, valid until its next fill.
     */
    record WriteInline(long xfer, byte[] notification, long[] addresses, long[] lengths, ByteBuffer data)
            implements ControlFrame {
    }

    /** Result of a WRITE at its target, sent after the last byte landed (or was drained). */
    record WriteAck(long xfer, int status) implements ControlFrame {
    }

    /**
     * READ request: ranges on the receiver of this frame to send back, and the largest packing limit and
     * packed chunk the sender of this frame takes (both 0: no packed chunks).
     */
    record Read(long xfer, int pack, int packedChunk, long[] addresses, long[] lengths) implements ControlFrame {
    }

    /**
     * A READ whose initiator takes the bytes inline: answered by a {@link ReadReply} if the receiver of
     * this frame chooses to, else as a {@link Read} (READ_DATA and chunks, or READ_NACK).
     */
    record ReadInline(long xfer, int pack, int packedChunk, long[] addresses, long[] lengths)
            implements ControlFrame {
    }

    /**
     * The bytes of a {@link ReadInline}'s ranges, back to back; decoded, a view into the
     * {@link FrameReader}'s buffer, valid until its next fill.
     */
    record ReadReply(long xfer, ByteBuffer data) implements ControlFrame {
    }

    /** READ accepted: the chunk sequence of the requested ranges follows with this chunk size and packing. */
    record ReadData(long xfer, int chunkSize, int pack, int packedChunk) implements ControlFrame {
    }

    /** READ refused. */
    record ReadNack(long xfer, int status) implements ControlFrame {
    }

    /** A notification for the receiver's queue. */
    record Notif(byte[] message) implements ControlFrame {
    }

    /** Keep-alive. */
    record Ping() implements ControlFrame {
    }

    /** Graceful close. */
    record Bye() implements ControlFrame {
    }

    /** Decodes one frame's type and payload (the length prefix already stripped). */
    static ControlFrame decode(int type, ByteBuffer payload) {
        Wire w = Wire.of(payload, name(type));
        ControlFrame f = switch (type) {
            case HELLO -> {
                int version = w.u16();
                String name = w.name();
                long inc = w.i64();
                byte[] nonce = w.bytes(NONCE_BYTES);
                int ch = w.u8();
                if (version != PROTOCOL_VERSION) {
                    w.skipRest(); // refused by version; what another version adds is not ours to read
                    yield new Hello(version, name, inc, nonce, ch, 0);
                }
                yield new Hello(version, name, inc, nonce, ch, w.count(MAX_FRAME));
            }
            case CHALLENGE -> new Challenge(w.name(), w.bytes(NONCE_BYTES), w.bytes(PROOF_BYTES));
            case PROOF -> new Proof(w.bytes(PROOF_BYTES));
            case HELLO_OK -> new HelloOk(w.name(), w.i64(), w.u8(), w.count(MAX_FRAME));
            case REJECT -> {
                int status = w.i32();
                int len = w.u16();
                yield new Reject(status, new String(w.bytes(len), StandardCharsets.UTF_8));
            }
            case HANDLES -> {
                int n = w.u8();
                if (n < 1 || n > MAX_CHANNELS) {
                    throw Wire.bad("HANDLES", n + " handles");
                }
                byte[][] hs = new byte[n][];
                for (int i = 0; i < n; i++) {
                    hs[i] = w.bytes(io.tcpx4j.domain.port.out.Listener.HANDLE_SIZE);
                }
                yield new Handles(hs);
            }
            case WRITE -> {
                long xfer = w.i64();
                int chunk = w.i32();
                int pack = w.i32();
                int packed = w.i32();
                byte[] notif = readNotification(w);
                int n = w.count(MAX_RANGES);
                long[][] r = ranges(w, n);
                yield new Write(xfer, chunk, pack, packed, notif, r[0], r[1]);
            }
            case WRITE_INLINE -> {
                long xfer = w.i64();
                byte[] notif = readNotification(w);
                int n = w.count(MAX_RANGES);
                long[][] r = ranges(w, n);
                yield new WriteInline(xfer, notif, r[0], r[1], w.view(inlineBytes(r[1], w.remaining())));
            }
            case WRITE_ACK -> new WriteAck(w.i64(), w.i32());
            case READ, READ_INLINE -> {
                long xfer = w.i64();
                int pack = w.i32();
                int packed = w.i32();
                int n = w.count(MAX_RANGES);
                long[][] r = ranges(w, n);
                yield type == READ ? new Read(xfer, pack, packed, r[0], r[1])
                        : new ReadInline(xfer, pack, packed, r[0], r[1]);
            }
            case READ_REPLY -> {
                long xfer = w.i64();
                yield new ReadReply(xfer, w.view(w.count(MAX_FRAME)));
            }
            case READ_DATA -> new ReadData(w.i64(), w.i32(), w.i32(), w.i32());
            case READ_NACK -> new ReadNack(w.i64(), w.i32());
            case NOTIF -> {
                int len = w.count(MAX_NOTIFICATION);
                yield new Notif(w.bytes(len));
            }
            case PING -> new Ping();
            case BYE -> new Bye();
            default -> throw Wire.bad("control frame", "unknown type " + type);
        };
        w.end();
        return f;
    }

    /** The frame's name in errors; a constant, so that decoding builds no string. */
    private static String name(int type) {
        return switch (type) {
            case HELLO -> "HELLO";
            case HELLO_OK -> "HELLO_OK";
            case REJECT -> "REJECT";
            case HANDLES -> "HANDLES";
            case WRITE -> "WRITE";
            case WRITE_ACK -> "WRITE_ACK";
            case READ -> "READ";
            case READ_DATA -> "READ_DATA";
            case READ_NACK -> "READ_NACK";
            case NOTIF -> "NOTIF";
            case PING -> "PING";
            case BYE -> "BYE";
            case CHALLENGE -> "CHALLENGE";
            case PROOF -> "PROOF";
            case WRITE_INLINE -> "WRITE_INLINE";
            case READ_INLINE -> "READ_INLINE";
            case READ_REPLY -> "READ_REPLY";
            default -> "control frame";
        };
    }

    private static byte[] readNotification(Wire w) {
        int has = w.u8();
        if (has == 0) {
            return null;
        }
        if (has != 1) {
            throw Wire.bad("WRITE", "notification flag " + has);
        }
        return w.bytes(w.count(MAX_NOTIFICATION));
    }

    private static long[][] ranges(Wire w, int n) {
        if ((long) n * 16 > w.remaining()) {
            throw Wire.bad("ranges", n + " ranges in " + w.remaining() + " bytes");
        }
        long[] a = new long[n];
        long[] l = new long[n];
        for (int i = 0; i < n; i++) {
            a[i] = w.i64();
            l[i] = w.i64();
            if (l[i] < 0) {
                throw Wire.bad("ranges", "negative length");
            }
        }
        return new long[][] {a, l};
    }

    /** The byte count of inline data for {@code lengths}, which must be exactly the {@code remaining} bytes. */
    private static int inlineBytes(long[] lengths, int remaining) {
        long sum = 0;
        for (long l : lengths) {
            sum += l;
            if (sum > remaining) {
                throw Wire.bad("WRITE_INLINE", "ranges of more than the " + remaining + " bytes it carries");
            }
        }
        if (sum != remaining) {
            throw Wire.bad("WRITE_INLINE", "ranges of " + sum + " bytes but " + remaining + " bytes of data");
        }
        return remaining;
    }
}
