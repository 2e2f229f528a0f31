package io.tcpx4j.cli.fleet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Ranks, exchanges and the ends of a run of a benchmark group in a real etcd. */
@Timeout(120)
class FleetGroupTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    @RegisterExtension
    static final LocalEtcd.PerClass etcd = new LocalEtcd.PerClass();

    private static List<FleetGroup> join(String group, int n) throws Exception {
        List<FleetGroup> members = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            members.add(FleetGroup.join(etcd.client(), group, n));
        }
        return members;
    }

    private static CompletableFuture<Map<Integer, byte[]>> exchange(FleetGroup g, String stage, Duration timeout) {
        // a thread each: the common pool may have one thread on a small machine, and exchanges wait for each other
        return CompletableFuture.supplyAsync(() -> {
            try {
                return g.exchange(stage, ("from " + g.rank()).getBytes(StandardCharsets.UTF_8), stage, timeout);
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }, r -> new Thread(r, "exchange-" + g.rank() + "-" + stage).start());
    }

    private static Throwable failureOf(CompletableFuture<?> f) throws Exception {
        try {
            f.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("expected a failure, got " + f.get());
    }

    @Test
    void membersGetDistinctRanksAndAFullGroupRefusesMore() throws Exception {
        List<FleetGroup> members = join("full", 3);
        try {
            assertThat(members).extracting(FleetGroup::rank).containsExactly(0, 1, 2);
            assertThatThrownBy(() -> FleetGroup.join(etcd.client(), "full", 3))
                    .isInstanceOf(java.io.IOException.class).hasMessageContaining("has all 3 ranks taken")
                    .hasMessageContaining("--benchmark-group");
        } finally {
            members.forEach(FleetGroup::close);
        }
        // closing revoked the leases: the ranks are free for the next run at once
        List<FleetGroup> next = join("full", 3);
        next.forEach(FleetGroup::close);
        assertThat(next).extracting(FleetGroup::rank).containsExactly(0, 1, 2);
    }

    @Test
    void anExchangeGivesEveryMemberEveryValue() throws Exception {
        List<FleetGroup> members = join("exchange", 3);
        try {
            List<CompletableFuture<Map<Integer, byte[]>>> all = new ArrayList<>();
            for (FleetGroup g : members) {
                all.add(exchange(g, "info", WAIT));
            }
            for (CompletableFuture<Map<Integer, byte[]>> f : all) {
                Map<Integer, byte[]> values = f.get(60, TimeUnit.SECONDS);
                assertThat(values).containsOnlyKeys(0, 1, 2);
                assertThat(new String(values.get(2), StandardCharsets.UTF_8)).isEqualTo("from 2");
            }
        } finally {
            members.forEach(FleetGroup::close);
        }
    }

    @Test
    void aMemberThatFailsEndsTheOthersWaitWithItsReason() throws Exception {
        List<FleetGroup> members = join("fails", 3);
        try {
            CompletableFuture<?> a = exchange(members.get(0), "row-0", WAIT);
            CompletableFuture<?> b = exchange(members.get(1), "row-0", WAIT);
            members.get(2).fail("its transfer broke");
            for (CompletableFuture<?> f : List.of(a, b)) {
                assertThat(failureOf(f)).isInstanceOf(FleetException.class)
                        .hasMessage("worker rank 2 failed: its transfer broke");
            }
        } finally {
            members.forEach(FleetGroup::close);
        }
    }

    @Test
    void aMemberThatVanishesEndsTheOthersWaitNamingIt() throws Exception {
        List<FleetGroup> members = join("vanishes", 3);
        try {
            // everyone has seen everyone: rank 1's keys then disappear as they do when its lease expires
            for (CompletableFuture<?> f : List.of(exchange(members.get(0), "info", WAIT),
                    exchange(members.get(1), "info", WAIT), exchange(members.get(2), "info", WAIT))) {
                f.get(60, TimeUnit.SECONDS);
            }
            CompletableFuture<?> a = exchange(members.get(0), "row-0", WAIT);
            members.get(1).close();
            assertThat(failureOf(a)).isInstanceOf(FleetException.class)
                    .hasMessageContaining("worker rank 1 left benchmark group 'vanishes' before row-0");
        } finally {
            members.forEach(FleetGroup::close);
        }
    }

    @Test
    void aMemberThatEndedNormallyCountsAsArrived() throws Exception {
        List<FleetGroup> members = join("leaves", 2);
        try {
            CompletableFuture<?> a = exchange(members.get(0), "info", WAIT);
            exchange(members.get(1), "info", WAIT).get(60, TimeUnit.SECONDS);
            a.get(60, TimeUnit.SECONDS);
            // rank 1 arrives at "end" (and gives up waiting for rank 0), then ends its run
            assertThat(failureOf(exchange(members.get(1), "end", Duration.ofSeconds(1))))
                    .hasMessageContaining("rank 0 of benchmark group 'leaves' has not arrived");
            members.get(1).leave();
            // its keys went with its lease; its having ended normally still counts as its arrival
            assertThat(exchange(members.get(0), "end", WAIT).get(60, TimeUnit.SECONDS)).containsOnlyKeys(0);
        } finally {
            members.forEach(FleetGroup::close);
        }
    }

    @Test
    void aRankThatNeverComesTimesOutNamingIt() throws Exception {
        List<FleetGroup> members = new ArrayList<>(List.of(FleetGroup.join(etcd.client(), "short", 3),
                FleetGroup.join(etcd.client(), "short", 3)));
        try {
            Throwable t = failureOf(exchange(members.get(0), "info", Duration.ofSeconds(1)));
            assertThat(t).isInstanceOf(FleetException.class)
                    .hasMessage("waited 1 s for info: rank 1, 2 of benchmark group 'short' have not arrived"
                            .replace("rank 1, 2", "ranks 1, 2"));
        } finally {
            members.forEach(FleetGroup::close);
        }
    }
}
