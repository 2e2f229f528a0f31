package io.tcpx4j.domain.protocol;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CodecTest {

    private static final byte[] SECRET = new byte[ConnInfo.SECRET_BYTES];

    static {
        Arrays.fill(SECRET, (byte) 7);
    }

    @Test
    void connInfoRoundTrips() {
        ConnInfo c = new ConnInfo("prefill-0", "127.0.0.1", 40123, SECRET);
        assertThat(ConnInfo.decode(c.encode())).isEqualTo(c);
    }

    @Test
    void connInfoOfSeveralAgentsRoundTripsAsVersionTwoAndOneAgentStaysVersionOne() {
        ConnInfo one = new ConnInfo("decode-1", "10.0.0.2", 40123, SECRET);
        ConnInfo three = new ConnInfo("decode-1", "10.0.0.2", java.util.List.of(40123, 40124, 51000), SECRET);

        assertThat(one.encode()[4]).isEqualTo((byte) 1);
        assertThat(three.encode()[4]).isEqualTo((byte) 2);
        assertThat(ConnInfo.decode(three.encode())).isEqualTo(three).isNotEqualTo(one);
        assertThat(three.port()).isEqualTo(40123);
        assertThat(three.portFor("prefill-7")).isEqualTo(three.ports().get(ConnInfo.agentFor("prefill-7", 3)));
        assertThat(one.portFor("prefill-7")).isEqualTo(40123);
    }

    @Test
    void connInfoOfSeveralAgentsRejectsEveryTruncationAndAVersionTwoOfOneAgent() {
        byte[] three = new ConnInfo("a", "h", java.util.List.of(1, 2, 3), SECRET).encode();
        for (int n = 0; n < three.length; n++) {
            byte[] cut = Arrays.copyOf(three, n);
            assertThatThrownBy(() -> ConnInfo.decode(cut)).isInstanceOf(TransferException.class)
                    .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        }
        byte[] single = three.clone();
        single[4 + 1 + 2 + 2] = 1; // the agent count, after magic, version, name "a" and host "h"
        assertThatThrownBy(() -> ConnInfo.decode(single)).hasMessageContaining("version 2 with 1 agents");
        assertThatThrownBy(() -> new ConnInfo("a", "h", java.util.List.of(), SECRET)).hasMessageContaining("0 ports");
    }

    @Test
    void regionMetadataRoundTrips() {
        RegionMetadata m = new RegionMetadata("decode-3", new MemoryDescriptor(0x7f00_0000_1000L, 1 << 20, MemoryKind.VRAM, 5));
        assertThat(RegionMetadata.decode(m.encode())).isEqualTo(m);
    }

    @Test
    void everyTruncationOfAValidBlobIsRejectedAsInvalidParam() {
        byte[] conn = new ConnInfo("a", "127.0.0.1", 1, SECRET).encode();
        byte[] md = new RegionMetadata("a", MemoryDescriptor.dram(4096, 10)).encode();
        for (int n = 0; n < conn.length; n++) {
            byte[] cut = Arrays.copyOf(conn, n);
            assertThatThrownBy(() -> ConnInfo.decode(cut)).isInstanceOf(TransferException.class)
                    .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        }
        for (int n = 0; n < md.length; n++) {
            byte[] cut = Arrays.copyOf(md, n);
            assertThatThrownBy(() -> RegionMetadata.decode(cut)).isInstanceOf(TransferException.class)
                    .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
        }
    }

    @Test
    void trailingBytesAndWrappingRangesAreRejected() {
        byte[] md = new RegionMetadata("a", MemoryDescriptor.dram(4096, 10)).encode();
        byte[] longer = Arrays.copyOf(md, md.length + 1);
        assertThatThrownBy(() -> RegionMetadata.decode(longer)).hasMessageContaining("trailing");
        ByteBuffer b = ByteBuffer.wrap(md.clone());
        b.putLong(md.length - 16, -4096L); // address near the top
        b.putLong(md.length - 8, 8192L);   // length that wraps
        assertThatThrownBy(() -> RegionMetadata.decode(b.array())).isInstanceOf(TransferException.class)
                .hasMessageContaining("wraps");
    }

    /** A HELLO's payload: version, name "peer", incarnation, nonce, channels, then {@code tail}. */
    private static ByteBuffer helloPayload(int version, byte[] tail) {
        ByteBuffer b = ByteBuffer.allocate(2 + 1 + 4 + 8 + ControlFrame.NONCE_BYTES + 1 + tail.length);
        b.putShort((short) version).put((byte) 4).put("peer".getBytes()).putLong(9)
                .put(new byte[ControlFrame.NONCE_BYTES]).put((byte) 2).put(tail);
        return b.flip();
    }

    @Test
    void helloAndHelloOkCarryTheInlineLimitAndAHelloOfAnotherVersionDecodesForItsRefusal() {
        FrameWriter w = new FrameWriter();
        w.helloOk("beta", 7, 2, 131072);
        FrameReader r = new FrameReader();
        ByteBuffer p = w.pending();
        byte[] bytes = new byte[p.remaining()];
        p.get(bytes);
        r.feed(bytes);
        assertThat(r.next()).isEqualTo(new ControlFrame.HelloOk("beta", 7, 2, 131072));
        // this version: the limit must be there
        ControlFrame.Hello now = (ControlFrame.Hello) ControlFrame.decode(ControlFrame.HELLO,
                helloPayload(ControlFrame.PROTOCOL_VERSION, new byte[] {0, 0, 0x40, 0}));
        assertThat(now.inlineLimit()).isEqualTo(16384);
        assertThatThrownBy(() -> ControlFrame.decode(ControlFrame.HELLO,
                helloPayload(ControlFrame.PROTOCOL_VERSION, new byte[0])))
                .isInstanceOf(TransferException.class).hasMessageContaining("truncated");
        assertThatThrownBy(() -> ControlFrame.decode(ControlFrame.HELLO,
                helloPayload(ControlFrame.PROTOCOL_VERSION, new byte[] {(byte) 0x80, 0, 0, 0})))
                .as("a limit above the largest frame").isInstanceOf(TransferException.class);
        // an older peer's HELLO (no limit) and a newer one's (more fields) decode as far as the version check needs
        ControlFrame.Hello older = (ControlFrame.Hello) ControlFrame.decode(ControlFrame.HELLO,
                helloPayload(ControlFrame.PROTOCOL_VERSION - 1, new byte[0]));
        assertThat(older.version()).isEqualTo(ControlFrame.PROTOCOL_VERSION - 1);
        assertThat(older.name()).isEqualTo("peer");
        ControlFrame.Hello newer = (ControlFrame.Hello) ControlFrame.decode(ControlFrame.HELLO,
                helloPayload(ControlFrame.PROTOCOL_VERSION + 1, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9}));
        assertThat(newer.version()).isEqualTo(ControlFrame.PROTOCOL_VERSION + 1);
    }

    @Test
    void aFillThatLeavesRoomSaysTheChannelIsDrained() throws Exception {
        FrameWriter w = new FrameWriter();
        w.writeAck(1, RefusalCode.NONE);
        ByteBuffer p = w.pending();
        byte[] small = new byte[p.remaining()];
        p.get(small);
        FrameReader r = new FrameReader();
        assertThat(r.fill(Channels.newChannel(new ByteArrayInputStream(small)))).isEqualTo(small.length);
        assertThat(r.drained()).as("one frame, room left").isTrue();
        assertThat(r.next()).isEqualTo(new ControlFrame.WriteAck(1, 0));
        // more queued than the buffer holds: the fill stops full, and the bytes after it still count
        FrameWriter many = new FrameWriter();
        for (int i = 0; i < 2000; i++) {
            many.writeAck(i, RefusalCode.NONE);
        }
        ByteBuffer q = many.pending();
        byte[] big = new byte[q.remaining()];
        q.get(big);
        ReadableByteChannel ch = Channels.newChannel(new ByteArrayInputStream(big));
        int frames = 0;
        do {
            assertThat(r.fill(ch)).isPositive();
            while (r.next() != null) {
                frames++;
            }
        } while (!r.drained());
        assertThat(frames).isEqualTo(2000);
    }

    @Test
    void framesRoundTripThroughWriterAndReader() {
        FrameWriter w = new FrameWriter();
        byte[] nonce = new byte[ControlFrame.NONCE_BYTES];
        Arrays.fill(nonce, (byte) 5);
        byte[] proof = new byte[ControlFrame.PROOF_BYTES];
        Arrays.fill(proof, (byte) 6);
        w.hello("alpha", 42, nonce, 3, 65536);
        w.challenge("beta", SECRET, proof);
        w.proof(proof);
        w.write(9, 4096, 1024, 4096, new byte[] {1, 2}, new long[] {10, 20}, new long[] {30, 40}, 2);
        w.write(10, 4096, 0, 0, null, new long[0], new long[0], 0);
        w.read(11, 2048, 65536, new long[] {5}, new long[] {6}, 1);
        w.readData(11, 8192, 2048, 8192);
        w.writeAck(9, RefusalCode.NOT_ALLOWED);
        w.notif(new byte[] {9});
        w.ping();
        w.bye();
        FrameReader r = new FrameReader();
        ByteBuffer p = w.pending();
        byte[] bytes = new byte[p.remaining()];
        p.get(bytes);
        // feed byte by byte: frames only appear once complete
        int frames = 0;
        ControlFrame f;
        for (byte value : bytes) {
            r.feed(new byte[] {value});
            while ((f = r.next()) != null) {
                frames++;
                if (f instanceof ControlFrame.Write wr && wr.xfer() == 9) {
                    assertThat(wr.notification()).containsExactly(1, 2);
                    assertThat(wr.addresses()).containsExactly(10, 20);
                    assertThat(wr.lengths()).containsExactly(30, 40);
                    assertThat(wr.chunkSize()).isEqualTo(4096);
                    assertThat(wr.pack()).isEqualTo(1024);
                    assertThat(wr.packedChunk()).isEqualTo(4096);
                }
                if (f instanceof ControlFrame.Read rd) {
                    assertThat(rd.pack()).isEqualTo(2048);
                    assertThat(rd.packedChunk()).isEqualTo(65536);
                    assertThat(rd.addresses()).containsExactly(5);
                }
                if (f instanceof ControlFrame.ReadData rd) {
                    assertThat(rd.chunkSize()).isEqualTo(8192);
                    assertThat(rd.pack()).isEqualTo(2048);
                    assertThat(rd.packedChunk()).isEqualTo(8192);
                }
                if (f instanceof ControlFrame.Hello h) {
                    assertThat(h.name()).isEqualTo("alpha");
                    assertThat(h.nonce()).isEqualTo(nonce);
                    assertThat(h.channels()).isEqualTo(3);
                    assertThat(h.inlineLimit()).isEqualTo(65536);
                }
                if (f instanceof ControlFrame.Challenge c) {
                    assertThat(c.name()).isEqualTo("beta");
                    assertThat(c.nonce()).isEqualTo(SECRET);
                    assertThat(c.proof()).isEqualTo(proof);
                }
                if (f instanceof ControlFrame.Proof pr) {
                    assertThat(pr.proof()).isEqualTo(proof);
                }
            }
        }
        assertThat(frames).isEqualTo(11);
    }

    private static byte[] bytes(ByteBuffer view) {
        byte[] b = new byte[view.remaining()];
        view.duplicate().get(b);
        return b;
    }

    @Test
    void inlineFramesCarryTheirBytesFromHostMemoryAndRoundTrip() {
        long src = io.tcpx4j.domain.memory.NativeMemory.allocate(64, 4096);
        try {
            byte[] data = new byte[64];
            new Random(3).nextBytes(data);
            io.tcpx4j.domain.memory.NativeMemory.put(src, data, 0, data.length);
            FrameWriter w = new FrameWriter();
            w.writeInline(5, new byte[] {7}, new long[] {100, 200}, new long[] {10, 54}, 2,
                    new long[] {src, src + 10}, 64);
            w.readInline(6, 0, 0, new long[] {300}, new long[] {64}, 1);
            w.readReply(6, new long[] {src + 60, src}, new long[] {4, 60}, 2, 64);
            FrameReader r = new FrameReader();
            ByteBuffer p = w.pending();
            byte[] bytes = new byte[p.remaining()];
            p.get(bytes);
            r.feed(bytes);
            ControlFrame.WriteInline wi = (ControlFrame.WriteInline) r.next();
            assertThat(wi.xfer()).isEqualTo(5);
            assertThat(wi.notification()).containsExactly(7);
            assertThat(wi.addresses()).containsExactly(100, 200);
            assertThat(wi.lengths()).containsExactly(10, 54);
            assertThat(bytes(wi.data())).isEqualTo(data);
            ControlFrame.ReadInline ri = (ControlFrame.ReadInline) r.next();
            assertThat(ri.addresses()).containsExactly(300);
            assertThat(ri.lengths()).containsExactly(64);
            ControlFrame.ReadReply rr = (ControlFrame.ReadReply) r.next();
            assertThat(Arrays.copyOfRange(bytes(rr.data()), 0, 4)).isEqualTo(Arrays.copyOfRange(data, 60, 64));
            assertThat(Arrays.copyOfRange(bytes(rr.data()), 4, 64)).isEqualTo(Arrays.copyOfRange(data, 0, 60));
            assertThat(r.next()).isNull();
            // the reader moves one view over every frame: a frame's data stays its own, and read-only
            assertThat(bytes(wi.data())).isEqualTo(data);
            assertThat(wi.data().isReadOnly()).isTrue();
            assertThat(rr.data().isReadOnly()).isTrue();
        } finally {
            io.tcpx4j.domain.memory.NativeMemory.free(src);
        }
    }

    @Test
    void aWriteInlineWhoseRangesDoNotAddUpToItsDataIsRejected() {
        for (long[] lengths : new long[][] {{10, 53}, {10, 55}, {Long.MAX_VALUE, 1}}) {
            ByteBuffer f = ByteBuffer.allocate(8 + 1 + 4 + 32 + 64).putLong(5).put((byte) 0).putInt(2)
                    .putLong(100).putLong(lengths[0]).putLong(200).putLong(lengths[1]).put(new byte[64]).flip();
            assertThatThrownBy(() -> ControlFrame.decode(ControlFrame.WRITE_INLINE, f))
                    .isInstanceOf(TransferException.class).hasMessageContaining("WRITE_INLINE");
        }
    }

    @Test
    void oversizedLengthPrefixIsRejectedWithoutAllocating() {
        FrameReader r = new FrameReader();
        r.maxFrame(1024);
        r.feed(ByteBuffer.allocate(5).putInt(1 << 30).put((byte) 1).array());
        assertThatThrownBy(r::next).isInstanceOf(TransferException.class).hasMessageContaining("frame length");
    }

    @Test
    void randomBytesNeverEscapeAsAnythingButInvalidParam() {
        Random rnd = new Random(1);
        for (int i = 0; i < 20_000; i++) {
            byte[] junk = new byte[rnd.nextInt(64)];
            rnd.nextBytes(junk);
            int type = rnd.nextInt(16);
            try {
                ControlFrame.decode(type, ByteBuffer.wrap(junk));
            } catch (TransferException e) {
                assertThat(e.code()).isIn(TransferException.Code.INVALID_PARAM);
            }
            try {
                ConnInfo.decode(junk);
            } catch (TransferException e) {
                assertThat(e.code()).isIn(TransferException.Code.INVALID_PARAM, TransferException.Code.NOT_SUPPORTED);
            }
        }
    }
}
