package io.tcpx4j.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

class DriveUntilEndedTest {

    /** A transfer whose status is {@code status}; nothing else of it is used. */
    private static Transfer transfer(AtomicReference<TransferStatus> status) {
        return (Transfer) Proxy.newProxyInstance(Transfer.class.getClassLoader(), new Class<?>[] {Transfer.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("status")) {
                        return status.get();
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    /** An engine whose progress() runs {@code onProgress} and reports it as work; its default methods run as written. */
    private static TransferEngine engine(Runnable onProgress) {
        InvocationHandler h = (proxy, method, args) -> {
            if (method.isDefault() && !method.getName().equals("progress")) {
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            if (method.getName().equals("progress")) {
                onProgress.run();
                return 1;
            }
            throw new UnsupportedOperationException(method.getName());
        };
        return (TransferEngine) Proxy.newProxyInstance(TransferEngine.class.getClassLoader(),
                new Class<?>[] {TransferEngine.class}, h);
    }

    @Test
    void theCallingThreadRunsTheEngineUntilTheTransferEnds() {
        AtomicReference<TransferStatus> status = new AtomicReference<>(TransferStatus.IN_PROGRESS);
        AtomicInteger calls = new AtomicInteger();
        TransferEngine e = engine(() -> {
            if (calls.incrementAndGet() == 5000) {
                status.set(TransferStatus.DONE);
            }
        });
        assertThat(e.driveUntilEnded(transfer(status), Duration.ofMinutes(1))).isEqualTo(TransferStatus.DONE);
        assertThat(calls).hasValue(5000);
    }

    @Test
    @Timeout(30)
    void aTransferThatDoesNotEndInTimeIsReportedInProgress() {
        AtomicReference<TransferStatus> status = new AtomicReference<>(TransferStatus.IN_PROGRESS);
        AtomicInteger calls = new AtomicInteger();
        TransferEngine e = engine(calls::incrementAndGet);
        long t0 = System.nanoTime();
        assertThat(e.driveUntilEnded(transfer(status), Duration.ofMillis(50))).isEqualTo(TransferStatus.IN_PROGRESS);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(Duration.ofMillis(50).toNanos());
        assertThat(calls.get()).isPositive();
    }

    @Test
    void anEndedTransferNeedsNoProgress() {
        AtomicInteger calls = new AtomicInteger();
        TransferEngine e = engine(calls::incrementAndGet);
        assertThat(e.driveUntilEnded(transfer(new AtomicReference<>(TransferStatus.FAILED)), Duration.ZERO))
                .isEqualTo(TransferStatus.FAILED);
        assertThat(calls).hasValue(0);
    }
}
