package io.tcpx4j.it.reliability;

import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code Engine.stats()} is documented safe from any thread; leak checks poll it while connections
 * come and go. Found by PeerKillIT: a poll during connection set-up threw NullPointerException
 * (the channel array was published before its channels were created).
 */
@Timeout(60)
class StatsRaceIT {

    @Test
    void statsFromAnotherThreadWhileConnectionsComeAndGoNeverThrows() throws Exception {
        try (Node a = new Node(Node.config("race-a"));
             Node b = new Node(Node.config("race-b"))) {
            a.meet(b);
            RegisteredMemory src = a.randomRegion(4096, 1);
            RegisteredMemory dst = b.randomRegion(4096, 2);
            b.publish(dst, a);
            List<Throwable> thrown = new CopyOnWriteArrayList<>();
            AtomicBoolean stop = new AtomicBoolean();
            Thread poller = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        a.stats();
                        b.stats();
                    } catch (Throwable t) {
                        thrown.add(t);
                        return;
                    }
                }
            }, "stats-poller");
            poller.start();
            try {
                for (int i = 0; i < 100 && thrown.isEmpty(); i++) {
                    Transfer t = a.engine.session("race-b").write(List.of(Node.dram(src.descriptor().address(), 4096)),
                            List.of(Node.dram(dst.descriptor().address(), 4096)), null);
                    assertThat(Node.await(t, Duration.ofSeconds(10))).isEqualTo(TransferStatus.DONE);
                    a.engine.disconnect("race-b");
                    assertThat(Node.eventually(Duration.ofSeconds(10),
                            () -> a.stats().connections() == 0 && b.stats().connections() == 0)).isTrue();
                }
            } finally {
                stop.set(true);
                poller.join(10_000);
            }
            assertThat(thrown).as("exceptions from stats()").isEmpty();
        }
    }
}
