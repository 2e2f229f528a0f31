package io.tcpx4j.tck;

import io.tcpx4j.domain.idle.IdleSelector;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import org.junit.jupiter.api.Test;

import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.fail;

/**
 * Checks of {@link NetTransportConformanceTest} on comms made for a driver's selector
 * ({@code listen(device, driver)}, {@code connect(device, handle, driver)}), which is how an engine makes
 * them: every transport must serve them; one with {@link Capability#DRIVER_SOCKETS}, which moves bytes only
 * inside its caller's calls, must register every socket that can move a connect, an accept or a request
 * on with that selector, so that a driver blocked there is woken for each step.
 */
public abstract class DriverConformance extends LifecycleConformance {

    /**
     * Drives set-up, a transfer larger than the sockets' buffers and a peer's death through comms made for a
     * driver's selector. With {@link Capability#DRIVER_SOCKETS} the driver blocks in the selector and calls
     * the transports only after a wait ended, so a step that no socket in that selector announces leaves it
     * blocked past the deadline; without, it polls.
     */
    @Test
    void commsMadeForADriverSelectorMoveBytesAndWakeItWhereDeclared() {
        boolean declared = a.capabilities().contains(Capability.DRIVER_SOCKETS)
                && b.capabilities().contains(Capability.DRIVER_SOCKETS);
        try (IdleSelector driver = new IdleSelector()) {
            long deadline = System.nanoTime() + deadline().toNanos();
            Consumer<String> awaitEvent = declared ? what -> block(driver, what) : what -> {
                checkDeadline(deadline, what);
                LockSupport.parkNanos(100_000);
            };
            Listener l = b.listen(device(), driver);
            byte[] handle = l.handle();
            SendComm s = null;
            RecvComm r = null;
            while (true) {
                s = s != null ? s : a.connect(device(), handle, driver);
                r = r != null ? r : b.accept(l);
                if (s != null && r != null) {
                    break;
                }
                awaitEvent.accept("connect and accept");
            }
            b.closeListen(l);
            Channel c = new Channel(a, s, b, r);
            for (int size : new int[] {64 * 1024, 4 << 20}) {
                moveAfterEvents(c, new Loaded(this, c, size), size, awaitEvent);
            }
            closeSenderAfterEvents(c, new Loaded(this, c, PAGE), awaitEvent);
        }
    }

    /** Blocks in the driver's selector; a wait that lasts the whole deadline means no socket announced the step. */
    private void block(IdleSelector driver, String what) {
        long start = System.nanoTime();
        driver.await(deadline().toMillis(), () -> true);
        if (System.nanoTime() - start >= deadline().toNanos()) {
            fail(what + ": the driver's selector woke for nothing within " + deadline()
                    + ", though the transport declares " + Capability.DRIVER_SOCKETS);
        }
    }
}
