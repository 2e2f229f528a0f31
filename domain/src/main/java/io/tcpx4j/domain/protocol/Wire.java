package io.tcpx4j.domain.protocol;

import io.tcpx4j.api.TransferException;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Bounds-checked reading of untrusted bytes. Every decoder of tcpx4j reads through this class, so the
 * only outcome of malformed input is a {@link TransferException} with code INVALID_PARAM.
 *
 * <p><b>Not thread-safe.</b>
 */
public final class Wire {

    private final ByteBuffer buf;
    private final String what;

    private Wire(ByteBuffer buf, String what) {
        this.buf = buf;
        this.what = what;
    }

    /** Reads {@code bytes} (big-endian), naming {@code what} in errors. */
    public static Wire of(byte[] bytes, String what) {
        if (bytes == null) {
            throw bad(what, "null");
        }
        return new Wire(ByteBuffer.wrap(bytes), what);
    }

    /** Reads the remaining bytes of {@code buf} (big-endian); advances it. */
    public static Wire of(ByteBuffer buf, String what) {
        return new Wire(buf, what);
    }

    public int u8() {
        try {
            return buf.get() & 0xFF;
        } catch (BufferUnderflowException e) {
            throw truncated();
        }
    }

    public int u16() {
        try {
            return buf.getShort() & 0xFFFF;
        } catch (BufferUnderflowException e) {
            throw truncated();
        }
    }

    public int i32() {
        try {
            return buf.getInt();
        } catch (BufferUnderflowException e) {
            throw truncated();
        }
    }

    /** An unsigned 32-bit count no larger than {@code max}. */
    public int count(int max) {
        int n = i32();
        if (n < 0 || n > max) {
            throw bad(what, "count " + Integer.toUnsignedString(n) + " exceeds " + max);
        }
        return n;
    }

    public long i64() {
        try {
            return buf.getLong();
        } catch (BufferUnderflowException e) {
            throw truncated();
        }
    }

    public byte[] bytes(int n) {
        if (n < 0 || n > buf.remaining()) {
            throw truncated();
        }
        byte[] out = new byte[n];
        buf.get(out);
        return out;
    }

    /**
     * The next {@code n} bytes as a read-only view of the input (no copy), valid as long as the input
     * is; advances past them.
     */
    public ByteBuffer view(int n) {
        if (n < 0 || n > buf.remaining()) {
            throw truncated();
        }
        ByteBuffer v = buf.slice().limit(n);
        if (!v.isReadOnly()) {
            v = v.asReadOnlyBuffer(); // a view of a read-only input is read-only already
        }
        buf.position(buf.position() + n);
        return v;
    }

    /** A u8-length-prefixed UTF-8 string of 1..255 bytes. */
    public String name() {
        int n = u8();
        if (n == 0) {
            throw bad(what, "empty name");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes(n))).toString();
        } catch (CharacterCodingException e) {
            throw bad(what, "name is not UTF-8");
        }
    }

    public int remaining() {
        return buf.remaining();
    }

    /** Moves past whatever is left, unread. */
    public void skipRest() {
        buf.position(buf.limit());
    }

    /** Fails unless every byte was read: trailing garbage is an error, not ignored. */
    public void end() {
        if (buf.hasRemaining()) {
            throw bad(what, buf.remaining() + " trailing bytes");
        }
    }

    private TransferException truncated() {
        return bad(what, "truncated");
    }

    public static TransferException bad(String what, String why) {
        return new TransferException(TransferException.Code.INVALID_PARAM, "malformed " + what + ": " + why);
    }

    /** Writes a u8-length-prefixed UTF-8 name. */
    public static void putName(ByteBuffer out, String name) {
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        if (b.length == 0 || b.length > 255) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "name must be 1..255 UTF-8 bytes");
        }
        out.put((byte) b.length).put(b);
    }

    public static int nameSize(String name) {
        return 1 + name.getBytes(StandardCharsets.UTF_8).length;
    }
}
