package io.tcpx4j.cli;

import io.tcpx4j.api.PeerStats;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** A long-running {@code serve} keeps no trace of initiators that have gone (each bench initiator has a fresh name). */
class ServePeersTest {

    @Test
    void initiatorsThatHaveGoneAreForgottenSoTheServersPeersDoNotGrowWithEveryRun() throws Exception {
        try (TwoHostTest.Served s = new TwoHostTest.Served()) {
            for (int run = 0; run < 3; run++) {
                Cli.Result r = Cli.run("bench", "--role", "initiator", "--peer", s.peer(), "--block-sizes", "4K",
                        "--iterations", "5", "--warmup", "1", "--warmup-seconds", "0", "--no-baseline");
                assertThat(r.exit()).as(r.err()).isZero();
            }
            // the engine forgets a gone peer on its own housekeeping; the bound only turns a leak into a failure
            List<PeerStats> left = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                List<PeerStats> now = s.serve.peers();
                while (!now.isEmpty()) {
                    TimeUnit.MILLISECONDS.sleep(10);
                    now = s.serve.peers();
                }
                return now;
            }, () -> "peers still known: " + s.serve.peers());
            assertThat(left).isEmpty();
        }
    }
}
