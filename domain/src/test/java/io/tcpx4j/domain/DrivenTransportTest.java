package io.tcpx4j.domain;

import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.testing.ForwardingNetTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The thread that runs an engine's cycles ({@code doWork()} here) takes turns of the transport's own I/O
 * only where the transport has any ({@link NetTransport#drivable()}) and only while requests are out.
 */
class DrivenTransportTest {

    /** A transport double that says whether it is drivable and counts the turns it is given. */
    private static final class DrivableDouble extends ForwardingNetTransport {
        private final boolean drivable;
        final AtomicInteger turns = new AtomicInteger();

        DrivableDouble(NetTransport d, boolean drivable) {
            super(d);
            this.drivable = drivable;
        }

        @Override
        public boolean drivable() {
            return drivable;
        }

        @Override
        public int drive() {
            turns.incrementAndGet();
            return 0;
        }
    }

    private EnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private int turns() {
        return ((DrivableDouble) pair.ta).turns.get() + ((DrivableDouble) pair.tb).turns.get();
    }

    @ParameterizedTest(name = "drivable: {0}")
    @ValueSource(booleans = {true, false})
    void cyclesDriveADrivableTransportWhileItHoldsRequestsAndNoOtherTransportEver(boolean drivable) {
        pair = new EnginePair(EngineConfig.defaults("alpha").withInlineLimit(64 * 1024),
                EngineConfig.defaults("beta").withInlineLimit(64 * 1024), t -> new DrivableDouble(t, drivable));
        pair.transferAndCheck(true, new long[] {4096, 777});
        pair.transferAndCheck(false, new long[] {12_000});
        assertThat(turns()).as("inline transfers put no request on the transport").isZero();

        pair.transferAndCheck(true, new long[] {4 << 20});
        pair.transferAndCheck(false, new long[] {1 << 20, 3});
        if (drivable) {
            assertThat(turns()).as("turns while chunks were on the transport").isPositive();
        } else {
            assertThat(turns()).isZero();
        }
    }
}
