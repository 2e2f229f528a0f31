package io.tcpx4j.domain.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.protocol.ConnInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/** Conn-info arrives from the application's out-of-band channel: any bytes at all. */
class ConnInfoFuzzTest {

    private static final AtomicLong EXECUTIONS = new AtomicLong();

    static Stream<byte[]> seeds() {
        byte[] secret = new byte[ConnInfo.SECRET_BYTES];
        Arrays.fill(secret, (byte) 0x5A);
        return Stream.of(
                new ConnInfo("prefill-0", "127.0.0.1", 40123, secret).encode(),
                new ConnInfo("d\u00e9code-\u4e2d", "host.example", 1, secret).encode(),
                new ConnInfo("x".repeat(255), "::1", 65535, secret).encode(),
                new ConnInfo("decode-2", "10.1.2.3", java.util.List.of(40000, 40001, 40002, 40003), secret).encode());
    }

    @MethodSource("seeds")
    @FuzzTest(maxExecutions = 110_000, maxDuration = "4m")
    void decode(byte[] bytes) {
        EXECUTIONS.incrementAndGet();
        ConnInfo info;
        try {
            info = ConnInfo.decode(bytes);
        } catch (TransferException e) {
            DecoderContract.allowedRejection(e, true);
            return;
        }
        // accepted bytes are canonical: nothing was skipped, nothing invented
        if (!Arrays.equals(info.encode(), bytes)) {
            throw new AssertionError("conn-info " + info + " does not re-encode to the bytes it came from");
        }
    }

    @AfterAll
    static void ranEnough() {
        DecoderContract.checkExecutions("ConnInfo.decode", EXECUTIONS);
    }
}
