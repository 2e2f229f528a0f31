package io.tcpx4j.api;

import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

class DriveUntilEndedTest {

    /** A transfer whose await runs {@code onAwait} (which may throw) and then reports {@code status}. */
    private static Transfer transfer(AtomicReference<TransferStatus> status, AtomicReference<Duration> awaited,
                                     boolean interrupt) {
        return (Transfer) Proxy.newProxyInstance(Transfer.class.getClassLoader(), new Class<?>[] {Transfer.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "status" -> status.get();
                    case "await" -> {
                        awaited.set((Duration) args[0]);
                        if (interrupt) {
                            throw new InterruptedException();
                        }
                        yield status.get();
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** An engine whose default methods run as written and whose other methods are never called. */
    private static TransferEngine engine() {
        InvocationHandler h = (proxy, method, args) -> {
            if (method.isDefault()) {
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            throw new UnsupportedOperationException(method.getName());
        };
        return (TransferEngine) Proxy.newProxyInstance(TransferEngine.class.getClassLoader(),
                new Class<?>[] {TransferEngine.class}, h);
    }

    @Test
    void theDefaultAwaitsTheTransferWithTheGivenTimeout() {
        AtomicReference<Duration> awaited = new AtomicReference<>();
        Transfer t = transfer(new AtomicReference<>(TransferStatus.DONE), awaited, false);
        assertThat(engine().driveUntilEnded(t, Duration.ofMillis(1234))).isEqualTo(TransferStatus.DONE);
        assertThat(awaited.get()).isEqualTo(Duration.ofMillis(1234));
    }

    @Test
    void anInterruptEndsTheWaitAndStaysSetOnTheThread() {
        Transfer t = transfer(new AtomicReference<>(TransferStatus.IN_PROGRESS), new AtomicReference<>(), true);
        try {
            assertThat(engine().driveUntilEnded(t, Duration.ofMinutes(1))).isEqualTo(TransferStatus.IN_PROGRESS);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void theDefaultProgressDoesNothing() {
        assertThat(engine().progress()).isZero();
    }
}
