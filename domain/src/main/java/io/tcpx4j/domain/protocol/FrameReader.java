package io.tcpx4j.domain.protocol;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;

/**
 * Reassembles control frames from a non-blocking byte stream. Memory is bounded by
 * {@link ControlFrame#MAX_FRAME}: a length prefix beyond it is a protocol error, not an allocation.
 *
 * <p><b>Not thread-safe.</b>
 */
public final class FrameReader {

    // write mode: bytes [consumed, position) are read but not yet returned as frames; a direct buffer,
    // so a socket reads straight into it (a heap buffer costs the JDK a copy through a direct one)
    private ByteBuffer in = ByteBuffer.allocateDirect(8 * 1024);
    /** A read-only view of {@code in}, moved over each frame's payload: no buffer object per frame. */
    private ByteBuffer frames = in.asReadOnlyBuffer();
    private int consumed;
    private int maxFrame = ControlFrame.MAX_FRAME;
    private int needCapacity;
    /** The last {@link #fill} left room in the buffer: the channel had no more bytes at that moment. */
    private boolean drained;

    /** Caps the frame length accepted from here on (small until a peer has authenticated). */
    public void maxFrame(int bytes) {
        this.maxFrame = Math.min(bytes, ControlFrame.MAX_FRAME);
    }

    /**
     * Reads what the channel has. Returns the bytes read, or -1 at end of stream. Views into the
     * frames returned before ({@link ControlFrame.WriteInline#data()}, {@link ControlFrame.ReadReply#data()})
     * are valid until this call.
     */
    public int fill(ReadableByteChannel channel) throws IOException {
        compact();
        if (!in.hasRemaining()) {
            grow();
        }
        int n = channel.read(in);
        drained = n >= 0 && in.hasRemaining();
        return n;
    }

    /**
     * Whether the last {@link #fill} read less than the buffer had room for. From a socket that means
     * nothing more was queued then, so another read now would find nothing; a channel that buffers on
     * its own (TLS) may still hold bytes.
     */
    public boolean drained() {
        return drained;
    }

    /** Appends bytes (tests, fuzzing). */
    public void feed(byte[] bytes) {
        compact();
        while (in.remaining() < bytes.length) {
            reallocate(in.capacity() * 2);
        }
        in.put(bytes);
    }

    /** The next complete frame, or null if more bytes are needed. Throws INVALID_PARAM on garbage. */
    public ControlFrame next() {
        int available = in.position() - consumed;
        if (available < 4) {
            return null;
        }
        int len = in.getInt(consumed);
        if (len < 1 || len > maxFrame) {
            throw Wire.bad("control stream", "frame length " + Integer.toUnsignedString(len));
        }
        if (available < 4 + len) {
            if (in.capacity() < 4 + len) {
                needCapacity = 4 + len;
            }
            return null;
        }
        int start = consumed;
        int type = in.get(start + 4) & 0xFF;
        frames.limit(start + 4 + len).position(start + 5);
        consumed = start + 4 + len;
        return ControlFrame.decode(type, frames);
    }

    /** Drops the bytes already returned as frames. */
    private void compact() {
        if (consumed > 0) {
            in.limit(in.position()).position(consumed);
            in.compact();
            consumed = 0;
        }
    }

    private void grow() {
        int cap = Math.max(in.capacity() * 2, needCapacity);
        reallocate(Math.min(cap, ControlFrame.MAX_FRAME + 4));
    }

    /** Moves the bytes held to a new buffer of {@code capacity}. */
    private void reallocate(int capacity) {
        ByteBuffer bigger = ByteBuffer.allocateDirect(capacity);
        in.flip();
        bigger.put(in);
        in = bigger;
        frames = in.asReadOnlyBuffer();
    }
}
