package io.tcpx4j.domain.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameReader;
import io.tcpx4j.domain.protocol.FrameWriter;
import io.tcpx4j.domain.protocol.RefusalCode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The control stream as a hostile peer writes it: arbitrary bytes, cut into arbitrary reads, through
 * {@link FrameReader#feed} / {@link FrameReader#next} (and so {@code ControlFrame.decode}), with the
 * small pre-authentication frame cap or the full one.
 */
class ControlStreamFuzzTest {

    private static final AtomicLong EXECUTIONS = new AtomicLong();
    private static final AtomicLong FRAMES = new AtomicLong();

    /** A valid stream of every frame type, to start the mutator deep inside the decoder. */
    static Stream<byte[]> seeds() {
        byte[] nonce = new byte[ControlFrame.NONCE_BYTES];
        Arrays.fill(nonce, (byte) 3);
        byte[] proof = new byte[ControlFrame.PROOF_BYTES];
        Arrays.fill(proof, (byte) 4);
        FrameWriter w = new FrameWriter();
        w.hello("alpha", 42, nonce, 2, 32768);
        w.challenge("beta", nonce, proof);
        w.proof(proof);
        w.helloOk("beta", 7, 2, 0);
        w.reject(RefusalCode.NOT_ALLOWED, "wrong connection secret");
        w.handles(new byte[][] {new byte[128], new byte[128]});
        w.write(9, 4096, 1024, 4096, new byte[] {1, 2}, new long[] {10, 20}, new long[] {30, 40}, 2);
        w.write(10, 4096, 0, 0, null, new long[0], new long[0], 0);
        w.writeAck(9, RefusalCode.NOT_ALLOWED);
        w.read(11, 2048, 65536, new long[] {5}, new long[] {6}, 1);
        w.readData(11, 8192, 2048, 8192);
        w.readNack(12, RefusalCode.NOT_ALLOWED);
        w.notif(new byte[] {9});
        w.ping();
        w.bye();
        ByteBuffer p = w.pending();
        byte[] all = new byte[p.remaining()];
        p.get(all);
        // control byte 0: one read, full frame cap
        byte[] seed = new byte[all.length + 1];
        System.arraycopy(all, 0, seed, 1, all.length);
        return Stream.of(seed);
    }

    @MethodSource("seeds")
    @FuzzTest(maxExecutions = 110_000, maxDuration = "4m")
    void readStream(byte[] input) {
        EXECUTIONS.incrementAndGet();
        if (input.length == 0) {
            return;
        }
        // byte 0 steers the reader: bit 0 the pre-admission frame cap, bits 1-3 how many reads the rest
        // arrives in (cut at points derived from the input, so a finding replays)
        int control = input[0] & 0xFF;
        FrameReader reader = new FrameReader();
        if ((control & 1) != 0) {
            reader.maxFrame(1024); // what Connection allows before the dialer proved the secret
        }
        int reads = 1 + ((control >>> 1) & 7);
        SplittableRandom cuts = new SplittableRandom(control * 31L + input.length);
        int at = 1;
        try {
            for (int i = 0; i < reads && at < input.length; i++) {
                int n = i == reads - 1 ? input.length - at : cuts.nextInt(input.length - at + 1);
                reader.feed(Arrays.copyOfRange(input, at, at + n));
                at += n;
                ControlFrame f;
                int guard = 0;
                while ((f = reader.next()) != null) {
                    FRAMES.incrementAndGet();
                    if (++guard > input.length) {
                        throw new AssertionError("more frames than input bytes: the reader loops");
                    }
                    if (f.getClass().getEnclosingClass() != ControlFrame.class) {
                        throw new AssertionError("unexpected frame type " + f.getClass());
                    }
                }
            }
        } catch (TransferException e) {
            DecoderContract.allowedRejection(e, false);
        }
    }

    @AfterAll
    static void ranEnough() {
        System.out.println("[fuzz] control stream: " + FRAMES.get() + " frames decoded");
        DecoderContract.checkExecutions("FrameReader/ControlFrame.decode", EXECUTIONS);
    }
}
