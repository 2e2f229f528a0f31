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

    private ByteBuffer in = ByteBuffer.allocate(64 * 1024);
    private int maxFrame = ControlFrame.MAX_FRAME;

    /** Caps the frame length accepted from here on (small until a peer has authenticated). */
    public void maxFrame(int bytes) {
        this.maxFrame = Math.min(bytes, ControlFrame.MAX_FRAME);
    }

    /**
     * Reads what the channel has. Returns the bytes read, or -1 at end of stream.
     */
    public int fill(ReadableByteChannel channel) throws IOException {
        if (!in.hasRemaining()) {
            grow();
        }
        return channel.read(in);
    }

    /** Appends bytes (tests, fuzzing). */
    public void feed(byte[] bytes) {
        while (in.remaining() < bytes.length) {
            ByteBuffer bigger = ByteBuffer.allocate(in.capacity() * 2);
            in.flip();
            bigger.put(in);
            in = bigger;
        }
        in.put(bytes);
    }

    /** The next complete frame, or null if more bytes are needed. Throws INVALID_PARAM on garbage. */
    public ControlFrame next() {
        in.flip();
        try {
            if (in.remaining() < 4) {
                return null;
            }
            int len = in.getInt(in.position());
            if (len < 1 || len > maxFrame) {
                throw Wire.bad("control stream", "frame length " + Integer.toUnsignedString(len));
            }
            if (in.remaining() < 4 + len) {
                if (in.capacity() < 4 + len) {
                    needCapacity = 4 + len;
                }
                return null;
            }
            int start = in.position();
            int type = in.get(start + 4) & 0xFF;
            ByteBuffer payload = in.duplicate().position(start + 5).limit(start + 4 + len).slice();
            in.position(start + 4 + len);
            return ControlFrame.decode(type, payload);
        } finally {
            in.compact();
        }
    }

    private int needCapacity;

    private void grow() {
        int cap = Math.max(in.capacity() * 2, needCapacity);
        ByteBuffer bigger = ByteBuffer.allocate(Math.min(cap, ControlFrame.MAX_FRAME + 4));
        in.flip();
        bigger.put(in);
        in = bigger;
    }
}
