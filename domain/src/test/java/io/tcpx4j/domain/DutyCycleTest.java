package io.tcpx4j.domain;

import io.tcpx4j.domain.port.out.CallerLease;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link DutyCycle}: when the agent thread and callers of progress() take a turn of the transport's I/O. */
class DutyCycleTest {

    /** An owner with nothing to do whose due turns of the transport the test sets; counts drive() calls. */
    private static class CountingOwner implements DutyCycle.Owner {
        volatile boolean driveDue;
        int drives;
        int cycles;

        @Override
        public int cycle() {
            cycles++;
            return 0;
        }

        @Override
        public boolean idle() {
            return true;
        }

        @Override
        public int drive() {
            drives++;
            return 0;
        }

        @Override
        public boolean driveDue() {
            return driveDue;
        }

        @Override
        public void failed(Throwable e) {
            throw new AssertionError(e);
        }

        @Override
        public void stopped() {
            // nothing to release
        }
    }

    @Test
    void callersDriveTheTransportInEveryCallWhileRequestsAreOutAndRarelyOtherwise() {
        CountingOwner owner = new CountingOwner();
        try (Readiness readiness = new Readiness()) {
            DutyCycle duty = new DutyCycle(owner, readiness, 100, new CallerLease());

            owner.driveDue = true;
            for (int i = 0; i < 500; i++) {
                duty.progress();
            }
            assertThat(owner.drives).as("a turn per call while requests are out").isEqualTo(500);
            assertThat(owner.cycles).isEqualTo(500);

            owner.driveDue = false;
            owner.drives = 0;
            long start = System.nanoTime();
            for (int i = 0; i < 5000; i++) {
                duty.progress();
            }
            long elapsed = System.nanoTime() - start;
            assertThat(owner.cycles).as("a cycle per call regardless").isEqualTo(5500);
            assertThat(owner.drives).as("turns without requests out, over %d us", elapsed / 1000)
                    .isBetween(1, (int) (elapsed / DutyCycle.IDLE_DRIVE_NANOS) + 1);
        }
    }

    @Test
    void theAgentThreadDrivesTheTransportOnlyWhileRequestsAreOut() {
        CountingOwner owner = new CountingOwner();
        try (Readiness readiness = new Readiness()) {
            DutyCycle duty = new DutyCycle(owner, readiness, 100, new CallerLease());
            for (int i = 0; i < 100; i++) {
                duty.doWork();
            }
            assertThat(owner.drives).isZero();
            owner.driveDue = true;
            for (int i = 0; i < 100; i++) {
                duty.doWork();
            }
            assertThat(owner.drives).isEqualTo(100);
            assertThat(owner.cycles).isEqualTo(200);
        }
    }

    /** Busy for three leases' length, as a cycle that writes megabytes is. */
    private static void spinThreeLeases() {
        long until = System.nanoTime() + 3 * CallerLease.NANOS;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    @Test
    void aCallerHoldsTheLeaseForAsLongAsItsCallRuns() {
        long[] leaseInsideTheCall = {Long.MIN_VALUE};
        DutyCycle[] duty = new DutyCycle[1];
        CountingOwner owner = new CountingOwner() {
            @Override
            public int cycle() {
                super.cycle();
                if (leaseInsideTheCall[0] == Long.MIN_VALUE) {
                    // a cycle that writes megabytes: it outlasts the lease counted from the call's start
                    spinThreeLeases();
                    leaseInsideTheCall[0] = duty[0].callerLeaseNanos();
                }
                return 0;
            }
        };
        try (Readiness readiness = new Readiness()) {
            duty[0] = new DutyCycle(owner, readiness, 100, new CallerLease());
            assertThat(duty[0].callerLeaseNanos()).as("nobody has called").isNotPositive();

            duty[0].doWork();
            assertThat(leaseInsideTheCall[0]).as("the agent's own cycle is no caller's").isNotPositive();

            leaseInsideTheCall[0] = Long.MIN_VALUE;
            duty[0].progress();
            assertThat(leaseInsideTheCall[0]).as("lease seen 3 ms into a call").isPositive();
        }
    }

    @Test
    void aLeaseSharedByTwoDutyCyclesKeepsBothAgentThreadsOffWhileACallerRunsEitherOne() {
        CallerLease lease = new CallerLease();
        long[] otherLeaseInsideTheCall = {Long.MIN_VALUE};
        DutyCycle[] other = new DutyCycle[1];
        CountingOwner slow = new CountingOwner() {
            @Override
            public int cycle() {
                super.cycle();
                // the first agent's cycle writes megabytes, outlasting the lease of the second agent's last call
                spinThreeLeases();
                otherLeaseInsideTheCall[0] = other[0].callerLeaseNanos();
                return 0;
            }
        };
        try (Readiness r1 = new Readiness(); Readiness r2 = new Readiness()) {
            DutyCycle first = new DutyCycle(slow, r1, 100, lease);
            other[0] = new DutyCycle(new CountingOwner(), r2, 100, lease);
            other[0].progress();

            first.progress();
            assertThat(otherLeaseInsideTheCall[0]).as("second agent's lease, 3 ms into a call on the first")
                    .isPositive();
        }
    }
}
