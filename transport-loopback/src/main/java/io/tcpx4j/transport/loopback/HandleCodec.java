package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.Listener;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * The 128-byte listener handle: where to dial, how many sockets, and a random nonce the listener checks,
 * all under a CRC so that a truncated or corrupted handle is rejected before any socket is opened.
 *
 * <pre>
 *   0  u32  magic "TX4L"        24 u16 port
 *   4  u16  version (1)         26 u16 sockets per comm
 *   6  u16  address length 4|16 28 u32 device
 *   8  16 B address             32 16 B nonce
 *  48..123 zero                124 u32 CRC32 of bytes 0..123
 * </pre>
 */
final class HandleCodec {

    static final int MAGIC = 0x5458344C;
    static final int NONCE_BYTES = 16;
    /**
     * The hello every socket of a connect sends its listener before anything else:
     * {@code (u32 magic, 16 B nonce, u64 connection id, u16 index, u16 count)}, the nonce from the handle.
     */
    static final int HELLO_BYTES = 32;
    private static final int VERSION = 1;
    private static final int CRC_OFFSET = Listener.HANDLE_SIZE - 4;

    /** A decoded handle. */
    record Handle(InetSocketAddress address, int sockets, int device, byte[] nonce) {
    }

    private HandleCodec() {
    }

    static byte[] encode(InetSocketAddress address, int sockets, int device, byte[] nonce) {
        byte[] raw = address.getAddress().getAddress();
        ByteBuffer b = ByteBuffer.allocate(Listener.HANDLE_SIZE);
        b.putInt(MAGIC).putShort((short) VERSION).putShort((short) raw.length).put(raw);
        b.position(24);
        b.putShort((short) address.getPort()).putShort((short) sockets).putInt(device).put(nonce);
        b.putInt(CRC_OFFSET, crc(b.array()));
        return b.array();
    }

    static Handle decode(byte[] handle) {
        if (handle == null || handle.length != Listener.HANDLE_SIZE) {
            throw invalid("a handle has " + Listener.HANDLE_SIZE + " bytes, got "
                    + (handle == null ? "null" : handle.length));
        }
        ByteBuffer b = ByteBuffer.wrap(handle);
        if (b.getInt(0) != MAGIC || b.getShort(4) != VERSION) {
            throw invalid("not a loopback transport handle (magic/version mismatch)");
        }
        if (b.getInt(CRC_OFFSET) != crc(handle)) {
            throw invalid("corrupt handle (checksum mismatch)");
        }
        int len = b.getShort(6);
        if (len != 4 && len != 16) {
            throw invalid("bad address length " + len);
        }
        byte[] raw = new byte[len];
        b.get(8, raw);
        int port = Short.toUnsignedInt(b.getShort(24));
        int sockets = Short.toUnsignedInt(b.getShort(26));
        if (port == 0 || sockets < 1 || sockets > 16) {
            throw invalid("bad port " + port + " or socket count " + sockets);
        }
        byte[] nonce = new byte[NONCE_BYTES];
        b.get(32, nonce);
        try {
            return new Handle(new InetSocketAddress(InetAddress.getByAddress(raw), port), sockets, b.getInt(28), nonce);
        } catch (UnknownHostException e) {
            throw invalid("bad address");
        }
    }

    /** Flips one nonce byte without fixing the CRC (fault injection). */
    static byte[] corrupt(byte[] handle) {
        byte[] copy = handle.clone();
        copy[32] ^= 0x5A;
        return copy;
    }

    private static int crc(byte[] handle) {
        CRC32 crc = new CRC32();
        crc.update(handle, 0, CRC_OFFSET);
        return (int) crc.getValue();
    }

    private static TransferException invalid(String message) {
        return new TransferException(TransferException.Code.INVALID_PARAM, message);
    }
}
