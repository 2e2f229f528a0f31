package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;
import io.tcpx4j.tck.NetTransportConformanceTest;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Proves the conformance suite can fail: runs selected TCK tests against deliberately broken test
 * doubles around the loopback transport and expects failures, and against an honest forwarding
 * double and expects none (so the failures come from the breakage, not from the wrapping).
 */
class TckHasTeethTest {

    private static final String[] SLOT_TESTS = {"sixteenSendSlotsThenBusy", "aReceiveHoldsItsSlotUntilConsumed"};
    private static final String[] FIFO_TESTS = {"testAndConsumeAreFifo"};
    private static final String[] FRAGMENT_TESTS = {"devmemReceivesAreFragmentsCoveringTheReceiveExactlyOnce",
            "transfersEveryByte(int)"};
    private static final String[] ONE_COMM_TESTS = {"aListenerYieldsExactlyOneComm"};
    private static final String[] CLOSE_TESTS = {"closeWhileBusyDoesNotHangAndVoidsRequests",
            "closingTheTransportVoidsItsRequestsAndFailsThePeers"};
    private static final String[] WAKE_TESTS = {"wakeUpsAnnounceEveryStepOrAreNotSupported"};
    private static final String[] DRIVER_TESTS = {"commsMadeForADriverSelectorMoveBytesAndWakeItWhereDeclared"};

    @Test
    void anHonestForwardingDoublePasses() {
        TestExecutionSummary s = run(HonestTck.class, SLOT_TESTS, FIFO_TESTS, FRAGMENT_TESTS, ONE_COMM_TESTS,
                CLOSE_TESTS, WAKE_TESTS, DRIVER_TESTS);
        assertThat(s.getTestsSucceededCount()).isEqualTo(s.getTestsFoundCount()).isGreaterThanOrEqualTo(18);
        TestExecutionSummary d = run(HonestDriverTck.class, DRIVER_TESTS);
        assertThat(d.getTestsSucceededCount()).isEqualTo(d.getTestsFoundCount()).isEqualTo(1);
    }

    @Test
    void aSeventeenthSlotIsCaught() {
        TestExecutionSummary s = run(BrokenSlotsTck.class, SLOT_TESTS);
        assertThat(s.getTestsFoundCount()).isEqualTo(2);
        assertThat(s.getTestsFailedCount()).as("both slot tests fail").isEqualTo(2);
    }

    @Test
    void ignoredFifoIsCaught() {
        TestExecutionSummary s = run(BrokenFifoTck.class, FIFO_TESTS);
        assertThat(s.getTestsFoundCount()).isEqualTo(1);
        assertThat(s.getTestsFailedCount()).isEqualTo(1);
    }

    @Test
    void aSkippedFragmentIsCaught() {
        TestExecutionSummary s = run(BrokenFragmentTck.class, FRAGMENT_TESTS);
        // sizes 0, 1, 4095 and 4096 have at most one fragment, which the double leaves alone
        assertThat(s.getTestsFoundCount()).isEqualTo(10);
        assertThat(s.getTestsFailedCount()).isEqualTo(6);
    }

    @Test
    void aListenerThatAcceptsAgainIsCaught() {
        TestExecutionSummary s = run(BrokenReacceptTck.class, ONE_COMM_TESTS);
        assertThat(s.getTestsFoundCount()).isEqualTo(1);
        assertThat(s.getTestsFailedCount()).isEqualTo(1);
    }

    @Test
    void requestsThatOutliveTheirCloseAreCaught() {
        TestExecutionSummary s = run(LingeringRequestsTck.class, CLOSE_TESTS);
        assertThat(s.getTestsFoundCount()).isEqualTo(2);
        assertThat(s.getTestsFailedCount()).isEqualTo(2);
    }

    @Test
    void missingWakeUpsAreCaught() {
        TestExecutionSummary s = run(SilentWakeUpsTck.class, WAKE_TESTS);
        assertThat(s.getTestsFoundCount()).isEqualTo(1);
        assertThat(s.getTestsFailedCount()).isEqualTo(1);
    }

    @Test
    void socketsKeptFromTheDriversSelectorAreCaught() {
        TestExecutionSummary s = run(UnwatchedSocketsTck.class, DRIVER_TESTS);
        assertThat(s.getTestsFoundCount()).isEqualTo(1);
        assertThat(s.getTestsFailedCount()).isEqualTo(1);
    }

    private static TestExecutionSummary run(Class<?> tck, String[]... methodGroups) {
        LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request();
        for (String[] group : methodGroups) {
            for (String m : group) {
                request.selectors(DiscoverySelectors.selectMethod(tck.getName() + "#" + m));
            }
        }
        LauncherDiscoveryRequest built = request.build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(built, listener);
        return listener.getSummary();
    }

    private static NetTransport loopback() {
        return new LoopbackTransport(LoopbackTransportConformanceTest.testConfig());
    }

    static class HonestTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new ForwardingNetTransport(loopback());
        }
    }

    static class HonestDriverTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new ForwardingNetTransport(new LoopbackTransport(LoopbackConfig.defaults().withIoThreads(0)));
        }
    }

    static class UnwatchedSocketsTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new UnwatchedSocketsTransportDouble(new LoopbackTransport(LoopbackConfig.defaults().withIoThreads(0)));
        }

        @Override
        protected Duration deadline() {
            return Duration.ofSeconds(2); // the broken double makes the suite wait this long before failing
        }
    }

    static class BrokenSlotsTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new BrokenSlotLimitTransportDouble(loopback());
        }
    }

    static class BrokenFifoTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new BrokenFifoTransportDouble(loopback());
        }
    }

    static class BrokenFragmentTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new BrokenFragmentTransportDouble(loopback());
        }
    }

    static class BrokenReacceptTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new AcceptsAgainTransportDouble(loopback());
        }
    }

    static class LingeringRequestsTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new LingeringRequestsTransportDouble(loopback());
        }
    }

    static class SilentWakeUpsTck extends NetTransportConformanceTest {
        @Override
        protected NetTransport newTransport() {
            return new SilentWakeUpsTransportDouble(loopback());
        }

        @Override
        protected Duration deadline() {
            return Duration.ofSeconds(2); // the broken double makes the suite wait this long before failing
        }
    }

    /** Once anything was closed, answers a test of a void request with "not yet" instead of INVALID_PARAM. */
    static final class LingeringRequestsTransportDouble extends ForwardingNetTransport {
        private volatile boolean closedSome;

        LingeringRequestsTransportDouble(NetTransport delegate) {
            super(delegate);
        }

        @Override
        public boolean test(NetRequest request) {
            try {
                return super.test(request);
            } catch (TransferException e) {
                if (closedSome && e.code() == TransferException.Code.INVALID_PARAM) {
                    return false;
                }
                throw e;
            }
        }

        @Override
        public void closeSend(SendComm comm) {
            closedSome = true;
            super.closeSend(comm);
        }

        @Override
        public void closeRecv(RecvComm comm) {
            closedSome = true;
            super.closeRecv(comm);
        }

        @Override
        public void close() {
            closedSome = true;
            super.close();
        }
    }

    /** Declares progress wake-ups (its delegate does) but never calls them. */
    static final class SilentWakeUpsTransportDouble extends ForwardingNetTransport {
        SilentWakeUpsTransportDouble(NetTransport delegate) {
            super(delegate);
        }

        @Override
        public Runnable wakeOnProgress(Runnable wake) {
            return () -> { };
        }
    }

    /**
     * Declares driver sockets (its delegate does) but keeps them from the driver's selector: the delegate
     * polls a selector of its own, which only the transport's calls look at.
     */
    static final class UnwatchedSocketsTransportDouble extends ForwardingNetTransport {
        UnwatchedSocketsTransportDouble(NetTransport delegate) {
            super(delegate);
        }

        @Override
        public Listener listen(int device, DriverSelector driver) {
            return super.listen(device);
        }

        @Override
        public SendComm connect(int device, byte[] handle, DriverSelector driver) {
            return super.connect(device, handle);
        }
    }

    /** Answers a second accept on a listener with "not yet" instead of refusing it (what TCPX cannot survive). */
    static final class AcceptsAgainTransportDouble extends ForwardingNetTransport {
        private final java.util.Set<Listener> yielded = java.util.concurrent.ConcurrentHashMap.newKeySet();

        AcceptsAgainTransportDouble(NetTransport delegate) {
            super(delegate);
        }

        @Override
        public RecvComm accept(Listener listener) {
            if (yielded.contains(listener)) {
                return null;
            }
            RecvComm c = super.accept(listener);
            if (c != null) {
                yielded.add(listener);
            }
            return c;
        }
    }
}
