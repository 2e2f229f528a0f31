package io.tcpx4j.domain;

import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Engine#progress()}: a caller's thread runs the duty cycle, alone (no agent thread) or taking
 * turns with the agent thread and other callers.
 */
class CallerDrivenProgressTest {

    private static final int SIZE = 4 << 20;

    @Test
    void callersAloneMoveEveryByteWithoutAnAgentThread() {
        try (StartedPair p = new StartedPair(IdlePolicy.ADAPTIVE, false, SIZE)) {
            for (int round = 0; round < 3; round++) {
                byte[] data = p.fill(round);
                Transfer x = p.write(("n" + round).getBytes());
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (x.status() == TransferStatus.IN_PROGRESS && System.nanoTime() < deadline) {
                    p.a.progress();
                    p.b.progress();
                }
                assertThat(x.status()).isEqualTo(TransferStatus.DONE);
                assertThat(p.received()).isEqualTo(data);
                assertThat(p.b.drainNotifications()).extracting(n -> new String(n.message())).containsExactly("n" + round);
            }
        }
    }

    @Test
    void callersAndTheAgentThreadTakeTurnsWithoutLosingAByte() throws Exception {
        try (StartedPair p = new StartedPair(IdlePolicy.ADAPTIVE, true, SIZE)) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> pollers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        p.a.progress();
                        p.b.progress();
                    }
                });
                t.start();
                pollers.add(t);
            }
            try {
                for (int round = 0; round < 10; round++) {
                    byte[] data = p.fill(round);
                    Transfer x = p.write(null);
                    assertThat(x.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
                    assertThat(p.received()).isEqualTo(data);
                }
            } finally {
                stop.set(true);
                for (Thread t : pollers) {
                    t.join();
                }
            }
            assertThat(p.a.stats().outstandingRequests()).isZero();
        }
    }

    @Test
    void progressAfterCloseDoesNothing() {
        StartedPair p = new StartedPair(IdlePolicy.ADAPTIVE, true, SIZE);
        p.close();
        assertThat(p.a.progress()).isZero();
    }
}
