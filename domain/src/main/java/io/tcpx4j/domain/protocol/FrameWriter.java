package io.tcpx4j.domain.protocol;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Appends encoded control frames to a growable buffer that the connection flushes to its socket.
 *
 * <p><b>Not thread-safe.</b>
 */
public final class FrameWriter {

    // direct: a socket writes straight from it (a heap buffer costs the JDK a copy through a direct one)
    private ByteBuffer out = ByteBuffer.allocateDirect(4096);

    /** Bytes waiting, ready for reading (flip view); call {@link #compact()} after writing some out. */
    public ByteBuffer pending() {
        return out.flip();
    }

    /** Keeps what was not written yet and returns to appending. */
    public void compact() {
        out.compact();
    }

    public boolean isEmpty() {
        return out.position() == 0;
    }

    private ByteBuffer frame(byte type, int payload) {
        int total = 4 + 1 + payload;
        if (1 + payload > ControlFrame.MAX_FRAME) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "control frame of " + payload + " bytes exceeds " + ControlFrame.MAX_FRAME);
        }
        if (out.remaining() < total) {
            ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(out.capacity() * 2, out.position() + total));
            out.flip();
            bigger.put(out);
            out = bigger;
        }
        return out.putInt(1 + payload).put(type);
    }

    /** {@code inlineLimit}: the most bytes this side takes in one WRITE_INLINE. */
    public void hello(String name, long incarnation, byte[] nonce, int channels, int inlineLimit) {
        exactly(nonce, ControlFrame.NONCE_BYTES, "nonce");
        frame(ControlFrame.HELLO, 2 + Wire.nameSize(name) + 8 + ControlFrame.NONCE_BYTES + 1 + 4)
                .putShort((short) ControlFrame.PROTOCOL_VERSION);
        Wire.putName(out, name);
        out.putLong(incarnation).put(nonce).put((byte) channels).putInt(inlineLimit);
    }

    public void challenge(String name, byte[] nonce, byte[] proof) {
        exactly(nonce, ControlFrame.NONCE_BYTES, "nonce");
        exactly(proof, ControlFrame.PROOF_BYTES, "proof");
        frame(ControlFrame.CHALLENGE, Wire.nameSize(name) + ControlFrame.NONCE_BYTES + ControlFrame.PROOF_BYTES);
        Wire.putName(out, name);
        out.put(nonce).put(proof);
    }

    public void proof(byte[] proof) {
        exactly(proof, ControlFrame.PROOF_BYTES, "proof");
        frame(ControlFrame.PROOF, ControlFrame.PROOF_BYTES).put(proof);
    }

    private static void exactly(byte[] b, int n, String what) {
        if (b.length != n) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    what + " must be " + n + " bytes, was " + b.length);
        }
    }

    /** {@code inlineLimit}: the most bytes this side takes in one WRITE_INLINE. */
    public void helloOk(String name, long incarnation, int channels, int inlineLimit) {
        frame(ControlFrame.HELLO_OK, Wire.nameSize(name) + 8 + 1 + 4);
        Wire.putName(out, name);
        out.putLong(incarnation).put((byte) channels).putInt(inlineLimit);
    }

    public void reject(RefusalCode refusal, String message) {
        int status = refusal.wire();
        byte[] m = message.getBytes(StandardCharsets.UTF_8);
        int len = Math.min(m.length, 65535);
        frame(ControlFrame.REJECT, 4 + 2 + len).putInt(status).putShort((short) len).put(m, 0, len);
    }

    public void handles(byte[][] handles) {
        frame(ControlFrame.HANDLES, 1 + handles.length * io.tcpx4j.domain.port.out.Listener.HANDLE_SIZE)
                .put((byte) handles.length);
        for (byte[] h : handles) {
            out.put(h);
        }
    }

    public void write(long xfer, int chunkSize, int pack, int packedChunk, byte[] notification, long[] addresses,
                      long[] lengths, int n) {
        int notifBytes = notification == null ? 1 : 1 + 4 + notification.length;
        frame(ControlFrame.WRITE, 8 + 4 + 4 + 4 + notifBytes + 4 + 16 * n).putLong(xfer).putInt(chunkSize).putInt(pack)
                .putInt(packedChunk);
        if (notification == null) {
            out.put((byte) 0);
        } else {
            out.put((byte) 1).putInt(notification.length).put(notification);
        }
        putRanges(addresses, lengths, n);
    }

    /**
     * A WRITE_INLINE: the ranges, then the bytes of {@code sources[i]} (host memory, {@code lengths[i]}
     * bytes each) copied straight into the frame. {@code total} is the sum of the lengths.
     */
    public void writeInline(long xfer, byte[] notification, long[] addresses, long[] lengths, int n,
                            long[] sources, int total) {
        int notifBytes = notification == null ? 1 : 1 + 4 + notification.length;
        frame(ControlFrame.WRITE_INLINE, 8 + notifBytes + 4 + 16 * n + total).putLong(xfer);
        if (notification == null) {
            out.put((byte) 0);
        } else {
            out.put((byte) 1).putInt(notification.length).put(notification);
        }
        putRanges(addresses, lengths, n);
        putBytes(sources, lengths, n);
    }

    public void writeAck(long xfer, RefusalCode status) {
        frame(ControlFrame.WRITE_ACK, 12).putLong(xfer).putInt(status.wire());
    }

    public void read(long xfer, int pack, int packedChunk, long[] addresses, long[] lengths, int n) {
        frame(ControlFrame.READ, 8 + 4 + 4 + 4 + 16 * n).putLong(xfer).putInt(pack).putInt(packedChunk);
        putRanges(addresses, lengths, n);
    }

    public void readInline(long xfer, int pack, int packedChunk, long[] addresses, long[] lengths, int n) {
        frame(ControlFrame.READ_INLINE, 8 + 4 + 4 + 4 + 16 * n).putLong(xfer).putInt(pack).putInt(packedChunk);
        putRanges(addresses, lengths, n);
    }

    /** A READ_REPLY with the bytes of {@code sources[i]} (host memory), {@code total} bytes in all. */
    public void readReply(long xfer, long[] sources, long[] lengths, int n, int total) {
        frame(ControlFrame.READ_REPLY, 8 + 4 + total).putLong(xfer).putInt(total);
        putBytes(sources, lengths, n);
    }

    public void readData(long xfer, int chunkSize, int pack, int packedChunk) {
        frame(ControlFrame.READ_DATA, 20).putLong(xfer).putInt(chunkSize).putInt(pack).putInt(packedChunk);
    }

    public void readNack(long xfer, RefusalCode status) {
        frame(ControlFrame.READ_NACK, 12).putLong(xfer).putInt(status.wire());
    }

    public void notif(byte[] message) {
        frame(ControlFrame.NOTIF, 4 + message.length).putInt(message.length).put(message);
    }

    public void ping() {
        frame(ControlFrame.PING, 0);
    }

    public void bye() {
        frame(ControlFrame.BYE, 0);
    }

    private void putBytes(long[] sources, long[] lengths, int n) {
        long bytes = NativeMemory.gather(sources, lengths, 0, n, NativeMemory.address(out) + out.position());
        out.position(out.position() + (int) bytes);
    }

    private void putRanges(long[] addresses, long[] lengths, int n) {
        out.putInt(n);
        for (int i = 0; i < n; i++) {
            out.putLong(addresses[i]).putLong(lengths[i]);
        }
    }
}
