package io.tcpx4j.tck;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.idle.IdleSelector;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Checks of {@link NetTransportConformanceTest} on {@link Capability#DRIVER_SOCKETS}: a transport that moves
 * bytes only inside its caller's calls must register every socket that can move a connect, an accept or a
 * request on with the driver's selector, so that a driver blocked there is woken for each step. A transport
 * without the capability is not asked.
 */
public abstract class DriverConformance extends LifecycleConformance {

    /**
     * Drives set-up, a transfer larger than the sockets' buffers and a peer's death the way an engine's
     * driver does: it blocks in the engine's selector and calls the transports only after a wait ended, so
     * a step that no socket in that selector announces leaves the driver blocked past the deadline.
     */
    @Test
    void driverSocketsWakeTheBlockedDriverForEveryStep() {
        if (!a.capabilities().contains(Capability.DRIVER_SOCKETS)
                || !b.capabilities().contains(Capability.DRIVER_SOCKETS)) {
            return;
        }
        try (IdleSelector driver = new IdleSelector()) {
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
                block(driver, "connect and accept");
            }
            b.closeListen(l);
            Channel c = new Channel(a, s, b, r);
            for (int size : new int[] {64 * 1024, 4 << 20}) {
                Loaded m = new Loaded(this, c, size);
                NetRequest recv = postRecv(c, m.dst.addr, size, m.rr);
                NetRequest send = postSend(c, m.src.addr, size, m.sr);
                boolean sent = false;
                boolean received = false;
                while (true) {
                    sent = sent || a.test(send);
                    received = received || b.test(recv);
                    if (sent && received) {
                        break;
                    }
                    block(driver, "a send and its receive of " + size + " bytes");
                }
                unpack(scatterGather(), recv, m.dst.addr, m.dst.kind);
                b.consumed(c.recv(), recv);
                verify(m.dst, m.data, size);
            }

            Loaded m = new Loaded(this, c, PAGE);
            NetRequest orphan = postRecv(c, m.dst.addr, PAGE, m.rr);
            a.closeSend(s);
            while (true) {
                try {
                    if (b.test(orphan)) {
                        fail("a receive whose sender closed completed");
                    }
                } catch (TransferException e) {
                    assertThat(e.code()).isEqualTo(Code.REMOTE_DISCONNECT);
                    break;
                }
                block(driver, "a receive whose sender closed");
            }
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
