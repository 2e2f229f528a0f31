package io.tcpx4j.tck;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Checks of {@link NetTransportConformanceTest} on the lifecycle the SPI states: what closing a comm, a
 * listener or the whole transport does to requests in flight and to the peer, and the progress wake-ups
 * of {@link Capability#PROGRESS_WAKEUPS} (or NOT_SUPPORTED where that is not declared).
 */
public abstract class LifecycleConformance extends CoreConformance {

    // ---- tests: close

    @Test
    void closeWhileBusyDoesNotHangAndVoidsRequests() {
        Channel c1 = connect(a, b);
        Channel c2 = connect(a, b);
        int size = 4 << 20;
        Buf buf = host(size);
        MemoryRegistration rr = b.register(c1.recv(), buf.addr, buf.capacity, PtrType.HOST);
        MemoryRegistration sr = a.register(c2.send(), buf.addr, buf.capacity, PtrType.HOST);
        List<NetRequest> recvs = new ArrayList<>();
        List<NetRequest> sends = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            recvs.add(postRecv(c1, buf.addr, size, rr));
            sends.add(postSend(c2, buf.addr, size, sr));
        }
        assertTimeoutPreemptively(deadline(), () -> {
            b.closeRecv(c1.recv());
            a.closeSend(c2.send());
        }, "closing busy comms hung");
        for (int i = 0; i < 4; i++) {
            NetRequest r = recvs.get(i);
            NetRequest s = sends.get(i);
            expectCode(() -> b.test(r), Code.INVALID_PARAM);
            expectCode(() -> b.consumed(c1.recv(), r), Code.INVALID_PARAM);
            expectCode(() -> a.test(s), Code.INVALID_PARAM);
        }
        expectCode(() -> b.irecv(c1.recv(), buf.addr, 1, 0, rr), Code.INVALID_PARAM);
        expectCode(() -> a.isend(c2.send(), buf.addr, 1, 0, sr), Code.INVALID_PARAM);
        expectCode(() -> a.register(c2.send(), buf.addr, buf.capacity, PtrType.HOST), Code.INVALID_PARAM);
        roundTrip(connect(a, b), 4097);
    }

    /**
     * Closing a transport ends what it has in flight in both directions: its own requests are void at
     * once, it takes no new work, and the peer's receive that waited for it fails instead of hanging.
     */
    @Test
    void closingTheTransportVoidsItsRequestsAndFailsThePeers() {
        Channel out = connect(a, b);
        Channel in = connect(b, a);
        Channel idle = connect(a, b);
        int size = 1 << 20;
        Buf src = host(size);
        Buf dst = host(size);
        Buf peerDst = host(PAGE);
        MemoryRegistration sr = a.register(out.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = a.register(in.recv(), dst.addr, dst.capacity, PtrType.HOST);
        MemoryRegistration pr = b.register(idle.recv(), peerDst.addr, peerDst.capacity, PtrType.HOST);
        NetRequest send = postSend(out, src.addr, size, sr); // nothing receives it
        NetRequest recv = postRecv(in, dst.addr, size, rr); // nothing is sent to it
        NetRequest peerRecv = postRecv(idle, peerDst.addr, PAGE, pr); // waits for a sender that closes
        Listener l = b.listen(device());
        byte[] handle = l.handle();

        assertTimeoutPreemptively(deadline(), a::close, "close() of a transport with requests in flight hung");

        expectCode(() -> a.test(send), Code.INVALID_PARAM);
        expectCode(() -> a.test(recv), Code.INVALID_PARAM);
        expectCode(() -> a.consumed(in.recv(), recv), Code.INVALID_PARAM);
        expectCode(() -> a.isend(out.send(), src.addr, 1, 0, sr), Code.INVALID_PARAM);
        expectCode(() -> a.irecv(in.recv(), dst.addr, 1, 0, rr), Code.INVALID_PARAM);
        expectCode(() -> a.register(out.send(), src.addr, src.capacity, PtrType.HOST), Code.INVALID_PARAM);
        expectCode(() -> a.listen(device()), Code.INVALID_PARAM);
        expectCode(() -> a.connect(device(), handle), Code.INVALID_PARAM);
        assertTimeoutPreemptively(deadline(), a::close, "a second close() hung");
        assertThat(awaitFailure(() -> b.test(peerRecv), "receive whose sending transport closed").code())
                .isEqualTo(Code.REMOTE_DISCONNECT);
        b.closeListen(l);
    }

    @Test
    void aClosedListenerAcceptsNothing() {
        Listener l = b.listen(device());
        b.closeListen(l);
        expectCode(() -> b.accept(l), Code.INVALID_PARAM);
    }

    @Test
    void peerCloseFailsPendingReceivesWithRemoteDisconnect() {
        Channel c = connect(a, b);
        Buf dst = host(PAGE);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r = postRecv(c, dst.addr, PAGE, rr);
        a.closeSend(c.send());
        TransferException e = awaitFailure(() -> b.test(r), "receive whose sender closed");
        assertThat(e.code()).isEqualTo(Code.REMOTE_DISCONNECT);
        expectCode(() -> b.irecv(c.recv(), dst.addr, PAGE, 0, rr), Code.REMOTE_DISCONNECT);
    }

    @Test
    void peerCloseFailsSendsWithRemoteDisconnect() {
        Channel c = connect(a, b);
        int size = 1 << 20;
        Buf src = host(size);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        b.closeRecv(c.recv());
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        TransferException e = awaitFailure(() -> {
            NetRequest s = a.isend(c.send(), src.addr, size, 0, sr);
            if (s != null) {
                sends.add(s);
            }
            if (!sends.isEmpty() && a.test(sends.peek())) {
                sends.poll(); // went into kernel buffers before the close was noticed; keep sending
            }
            return false;
        }, "sends to a closed receiver");
        assertThat(e.code()).isEqualTo(Code.REMOTE_DISCONNECT);
    }

    // ---- tests: progress wake-ups

    /**
     * Drives set-up, a transfer and a peer's death the way an engine that blocks does: it calls the
     * transports only after a wake-up (or at the start), so an event that moves something on without a
     * wake-up leaves it waiting past the deadline. A wake-up removed before anything happened is never
     * called.
     */
    @Test
    void wakeUpsAnnounceEveryStepOrAreNotSupported() {
        if (!wakeUps(a) || !wakeUps(b)) {
            return;
        }
        AtomicInteger removed = new AtomicInteger();
        a.wakeOnProgress(removed::incrementAndGet).run();
        b.wakeOnProgress(removed::incrementAndGet).run();
        Semaphore woken = new Semaphore(0);
        Runnable stopA = a.wakeOnProgress(woken::release);
        Runnable stopB = b.wakeOnProgress(woken::release);

        Listener l = b.listen(device());
        byte[] handle = l.handle();
        SendComm s = null;
        RecvComm r = null;
        while (true) {
            s = s != null ? s : a.connect(device(), handle);
            r = r != null ? r : b.accept(l);
            if (s != null && r != null) {
                break;
            }
            awaitWakeUp(woken, "connect and accept");
        }
        Channel c = new Channel(a, s, b, r);

        Loaded m = new Loaded(this, c, 64 * 1024);
        moveAfterEvents(c, m, 64 * 1024, what -> awaitWakeUp(woken, what));
        closeSenderAfterEvents(c, m, what -> awaitWakeUp(woken, what));
        stopA.run();
        stopB.run();
        assertThat(removed).as("calls of wake-ups removed before any event").hasValue(0);
    }

    /**
     * Moves {@code size} bytes of {@code m} over {@code c}, testing the send and the receive only at the start
     * and after each {@code awaitEvent} (given what is awaited), then unpacks, consumes and checks them.
     */
    final void moveAfterEvents(Channel c, Loaded m, int size, Consumer<String> awaitEvent) {
        NetRequest recv = postRecv(c, m.dst.addr, size, m.rr);
        NetRequest send = postSend(c, m.src.addr, size, m.sr);
        boolean sent = false;
        boolean received = false;
        while (true) {
            sent = sent || c.sender().test(send);
            received = received || c.receiver().test(recv);
            if (sent && received) {
                break;
            }
            awaitEvent.accept("a send and its receive of " + size + " bytes");
        }
        unpack(scatterGather(), recv, m.dst.addr, m.dst.kind);
        c.receiver().consumed(c.recv(), recv);
        verify(m.dst, m.data, size);
    }

    /**
     * Posts a receive on {@code c}, closes its sender, and tests the receive only after each
     * {@code awaitEvent} until it fails with REMOTE_DISCONNECT.
     */
    final void closeSenderAfterEvents(Channel c, Loaded m, Consumer<String> awaitEvent) {
        NetRequest orphan = postRecv(c, m.dst.addr, PAGE, m.rr);
        c.sender().closeSend(c.send());
        while (true) {
            try {
                if (c.receiver().test(orphan)) {
                    fail("a receive whose sender closed completed");
                }
            } catch (TransferException e) {
                assertThat(e.code()).isEqualTo(Code.REMOTE_DISCONNECT);
                return;
            }
            awaitEvent.accept("a receive whose sender closed");
        }
    }

    /** True if {@code t} declares wake-ups; otherwise checks that asking for them is NOT_SUPPORTED. */
    private static boolean wakeUps(NetTransport t) {
        if (t.capabilities().contains(Capability.PROGRESS_WAKEUPS)) {
            return true;
        }
        expectCode(() -> t.wakeOnProgress(() -> { }), Code.NOT_SUPPORTED);
        return false;
    }

    /** Blocks until a wake-up came (one that came since the last wait counts), then forgets the rest. */
    private void awaitWakeUp(Semaphore woken, String what) {
        boolean got;
        try {
            got = woken.tryAcquire(deadline().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        assertThat(got).as("%s: no wake-up within %s, though the transport declares %s", what, deadline(),
                Capability.PROGRESS_WAKEUPS).isTrue();
        woken.drainPermits();
    }
}
