package io.tcpx4j.nixl;

import io.tcpx4j.api.Notification;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backend tells its poll wait of every event a host polls for: a transfer that ends, a notification
 * that arrives. Each backend waits with an hour's window on CPUs it is told are contended, so a poll in a
 * loop returns only at that event; a missing signal fails by the timeout.
 */
@Timeout(60)
class NixlBackendPollWaitTest extends NixlBackendFixture {

    private final TransferEngineTestDouble.Network network = new TransferEngineTestDouble.Network();

    @Override
    NixlBackend newBackend(String name) {
        // 1 MiB takes a quarter of a second: long after the first poll
        TransferEngineTestDouble engine = new TransferEngineTestDouble(name, network, 4_000_000L);
        return new NixlBackend(engine, engine, CostModel.DEFAULT, false,
                new PollWait(Duration.ofHours(1), t -> true, System::nanoTime));
    }

    @Test
    void aHandlePolledInALoopOnContendedCpusIsAnsweredWhenItsTransferEnds() {
        Region src = filled(a, MIB, 3);
        Region dst = region(b, MIB);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, loadRemote(a, b, dst), 0, MIB, "B");
        assertThat(a.postXfer(h, null)).isEqualTo(NixlStatus.IN_PROG);
        assertThat(a.checkXfer(h)).as("the first poll of the loop").isEqualTo(NixlStatus.IN_PROG);

        assertThat(a.checkXfer(h)).as("the second waits for the end").isEqualTo(NixlStatus.SUCCESS);
        assertSameBytes(src, dst, new int[] {MIB});
    }

    @Test
    void notificationsPolledInALoopOnContendedCpusAreAnsweredWhenOneArrives() {
        Region src = filled(a, MIB, 4);
        Region dst = region(b, MIB);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, loadRemote(a, b, dst), 0, MIB, "B");
        assertThat(drain(b)).as("the first poll of the loop").isEmpty();
        byte[] msg = "block-9".getBytes(StandardCharsets.UTF_8);
        assertThat(a.postXfer(h, msg)).isEqualTo(NixlStatus.IN_PROG);

        List<Notification> got = drain(b);

        assertThat(got).containsExactly(new Notification("A", msg));
        assertSameBytes(src, dst, new int[] {MIB});
    }
}
