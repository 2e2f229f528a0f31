package io.tcpx4j.domain.port.out;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link CallerLease}: held while a caller is inside however long, for {@link CallerLease#NANOS} after the last. */
class CallerLeaseTest {

    @Test
    void nobodyHasCalledSoTheLeaseIsOver() {
        CallerLease lease = new CallerLease();
        assertThat(lease.held(System.nanoTime())).isFalse();
        assertThat(lease.leftNanos(System.nanoTime())).isNotPositive();
    }

    @Test
    void heldWhileACallerIsInsideEvenLongAfterItEntered() {
        CallerLease lease = new CallerLease();
        lease.enter();
        long muchLater = System.nanoTime() + 50 * CallerLease.NANOS;
        assertThat(lease.held(muchLater)).isTrue();
        assertThat(lease.leftNanos(muchLater)).isEqualTo(CallerLease.NANOS);
        lease.exit();
        assertThat(lease.held(muchLater)).as("after the call, counted from its end").isFalse();
    }

    @Test
    void runsForTheLeaseFromTheEndOfTheLastCall() {
        CallerLease lease = new CallerLease();
        lease.enter();
        lease.exit();
        long end = System.nanoTime();
        assertThat(lease.held(end)).isTrue();
        assertThat(lease.leftNanos(end)).isPositive().isLessThanOrEqualTo(CallerLease.NANOS);
        assertThat(lease.held(end + CallerLease.NANOS)).isFalse();
    }

    @Test
    void holdsUntilTheLastOfSeveralCallersLeaves() {
        CallerLease lease = new CallerLease();
        lease.enter();
        lease.enter();
        lease.exit();
        long muchLater = System.nanoTime() + 50 * CallerLease.NANOS;
        assertThat(lease.held(muchLater)).as("one caller still inside").isTrue();
        lease.exit();
        assertThat(lease.held(muchLater)).isFalse();
    }
}
