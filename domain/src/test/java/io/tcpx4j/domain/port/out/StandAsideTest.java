package io.tcpx4j.domain.port.out;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link StandAside}: the parks of a thread while callers renew their lease, and its takeover. */
class StandAsideTest {

    private static final long LEASE = 1_000_000;
    private static final long CAP = 8_000_000;

    @Test
    void aLeaseThatIsOverMeansTakeOver() {
        StandAside s = new StandAside(CAP);
        assertThat(s.parkNanos(0)).isZero();
        assertThat(s.parkNanos(-5)).isZero();
    }

    @Test
    void theFirstParkIsTheRestOfTheLeaseThenEachRenewalDoublesItUpToTheCap() {
        StandAside s = new StandAside(CAP);
        assertThat(s.parkNanos(300_000)).isEqualTo(300_000);
        assertThat(s.parkNanos(LEASE)).isEqualTo(LEASE);
        assertThat(s.parkNanos(LEASE)).isEqualTo(2 * LEASE);
        assertThat(s.parkNanos(LEASE)).isEqualTo(4 * LEASE);
        assertThat(s.parkNanos(LEASE)).isEqualTo(CAP);
        assertThat(s.parkNanos(LEASE)).isEqualTo(CAP);
    }

    @Test
    void aTakeOverStartsAgainFromTheLease() {
        StandAside s = new StandAside(CAP);
        for (int i = 0; i < 10; i++) {
            s.parkNanos(LEASE);
        }
        assertThat(s.parkNanos(0)).isZero();
        assertThat(s.parkNanos(LEASE)).isEqualTo(LEASE);
        assertThat(s.parkNanos(LEASE)).isEqualTo(2 * LEASE);
    }

    @Test
    void aParkNeverEndsBeforeTheLeaseEvenAboveTheCap() {
        StandAside s = new StandAside(CAP);
        s.parkNanos(LEASE);
        assertThat(s.parkNanos(3 * CAP)).isEqualTo(3 * CAP);
        assertThat(s.parkNanos(LEASE)).isEqualTo(CAP);
    }

    @Test
    void theCapMustBePositive() {
        assertThatThrownBy(() -> new StandAside(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxParkNanos must be positive, not 0");
    }
}
