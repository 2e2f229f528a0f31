package io.tcpx4j.tck;

import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.ScatterGather;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Checks of {@link NetTransportConformanceTest} on the request slots, FIFO testing, tags, asynchrony and
 * ordering within a window of messages.
 */
public abstract class SlotConformance extends TckFixture {

    // ---- tests: slots, FIFO, tags, asynchrony

    @Test
    void sixteenSendSlotsThenBusy() {
        Channel c = connect(a, b);
        int n = NetTransport.MAX_REQUESTS;
        Loaded m = new Loaded(this, c, n * 1000);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            NetRequest s = a.isend(c.send(), m.src.addr + i * 1000L, 1000, i, m.sr);
            assertThat(s).as("send %d of %d", i + 1, n).isNotNull();
            sends.add(s);
        }
        assertThat(a.isend(c.send(), m.src.addr, 1000, 99, m.sr)).as("17th send without any completed").isNull();
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            recvs.add(postRecv(c, m.dst.addr + i * 1000L, 1000, m.rr));
        }
        awaitDone(a, sends.poll(), "first send");
        NetRequest extra = a.isend(c.send(), m.src.addr, 1000, 99, m.sr);
        assertThat(extra).as("a send slot frees when its send tests done").isNotNull();
        drain(c, sends, recvs, m.dst);
        // The extra send may wait for its receive (the SPI does not promise buffering), so both go together.
        NetRequest extraRecv = postRecv(c, m.dst.addr, 1000, m.rr);
        drain(c, new ArrayDeque<>(List.of(extra)), new ArrayDeque<>(List.of(extraRecv)), m.dst);
        verify(m.dst, m.data, n * 1000);
    }

    @Test
    void aReceiveHoldsItsSlotUntilConsumed() {
        Channel c = connect(a, b);
        int n = NetTransport.MAX_REQUESTS;
        Loaded m = new Loaded(this, c, n * 512);
        List<NetRequest> recvs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            recvs.add(postRecv(c, m.dst.addr + i * 512L, 512, m.rr));
        }
        assertThat(b.irecv(c.recv(), m.dst.addr, 512, 0, m.rr)).as("17th receive").isNull();
        for (int i = 0; i < n; i++) {
            NetRequest s = postSend(c, m.src.addr + i * 512L, 512, m.sr);
            awaitDone(a, s, "send " + i);
        }
        for (int i = 0; i < n; i++) {
            awaitDone(b, recvs.get(i), "receive " + i);
        }
        assertThat(b.irecv(c.recv(), m.dst.addr, 512, 0, m.rr)).as("17th receive: all done, none consumed").isNull();
        ScatterGather u = scatterGather();
        unpack(u, recvs.get(0), m.dst.addr, m.dst.kind);
        b.consumed(c.recv(), recvs.get(0));
        NetRequest again = b.irecv(c.recv(), m.dst.addr + 15 * 512L, 512, 0, m.rr);
        assertThat(again).as("a consumed receive frees its slot").isNotNull();
        tracked(again, m.dst.addr + 15 * 512L);
        for (int i = 1; i < n; i++) {
            unpack(u, recvs.get(i), m.dst.addr + i * 512L, m.dst.kind);
            b.consumed(c.recv(), recvs.get(i));
        }
        verify(m.dst, m.data, n * 512);
        // the send is tested too: TCPX moves a send's data only from inside test()
        NetRequest last = postSend(c, m.src.addr + 15 * 512L, 512, m.sr);
        drain(c, new ArrayDeque<>(List.of(last)), new ArrayDeque<>(List.of(again)), m.dst);
        verify(m.dst, m.data, n * 512);
    }

    @Test
    void testAndConsumeAreFifo() {
        Channel c = connect(a, b);
        Loaded m = new Loaded(this, c, 2 * PAGE);
        NetRequest r0 = postRecv(c, m.dst.addr, PAGE, m.rr);
        NetRequest r1 = postRecv(c, m.dst.addr + PAGE, PAGE, m.rr);
        expectCode(() -> b.test(r1), Code.INVALID_PARAM);
        expectCode(() -> b.consumed(c.recv(), r0), Code.INVALID_PARAM);
        NetRequest s0 = postSend(c, m.src.addr, PAGE, m.sr);
        NetRequest s1 = postSend(c, m.src.addr + PAGE, PAGE, m.sr);
        LockSupport.parkNanos(20_000_000);
        expectCode(() -> a.test(s1), Code.INVALID_PARAM);
        awaitDone(a, s0, "send 0");
        awaitDone(a, s1, "send 1");
        awaitDone(b, r0, "receive 0");
        awaitDone(b, r1, "receive 1");
        ScatterGather u = scatterGather();
        unpack(u, r1, m.dst.addr + PAGE, m.dst.kind);
        expectCode(() -> b.consumed(c.recv(), r1), Code.INVALID_PARAM);
        unpack(u, r0, m.dst.addr, m.dst.kind);
        b.consumed(c.recv(), r0);
        b.consumed(c.recv(), r1);
        verify(m.dst, m.data, 2 * PAGE);
    }

    @Test
    void tagsAreIgnoredAndMessagesMatchInPostingOrder() {
        Channel c = connect(a, b);
        int size = 10_000;
        Loaded m = new Loaded(this, c, 3 * size);
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        for (int i = 0; i < 3; i++) {
            long d = m.dst.addr + (long) i * size;
            recvs.add(tracked(require(b.irecv(c.recv(), d, size, 3 - i, m.rr), "irecv"), d));
        }
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        for (int i = 0; i < 3; i++) {
            sends.add(require(a.isend(c.send(), m.src.addr + (long) i * size, size, 1 + i, m.sr), "isend"));
        }
        drain(c, sends, recvs, m.dst);
        verify(m.dst, m.data, 3 * size);
    }

    /**
     * Sixteen sends of 2 MiB, more than the sockets' buffers hold, posted and tested once each before any
     * receive exists: an isend or a test that waited for the peer would never return, because nothing
     * receives until they all have (the deadline only ends such a hang). Then the receives drain them.
     */
    @Test
    void postingNeverWaitsForThePeer() {
        Channel c = connect(a, b);
        int size = 2 << 20; // sixteen receives of it fill the loopback transport's default bounce pool exactly
        int messages = NetTransport.MAX_REQUESTS;
        Loaded m = new Loaded(this, c, messages * size);
        ArrayDeque<NetRequest> sends = assertTimeoutPreemptively(deadline(), () -> {
            ArrayDeque<NetRequest> posted = new ArrayDeque<>();
            for (int i = 0; i < messages; i++) {
                posted.add(postSend(c, m.src.addr + (long) i * size, size, m.sr));
                if (a.test(posted.peek())) { // kernel buffers may hold the oldest; then it is done (and recycled)
                    posted.poll();
                }
            }
            return posted;
        }, "posting and testing sends with no receive posted waited for the peer");
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        for (int i = 0; i < messages; i++) {
            recvs.add(postRecv(c, m.dst.addr + (long) i * size, size, m.rr));
        }
        drain(c, sends, recvs, m.dst);
        verify(m.dst, m.data, messages * size);
    }

    @Test
    void aWindowOfSendsPostedAheadOfItsReceivesArrivesIntact() {
        Channel c = connect(a, b);
        int messages = 12;
        int size = 1 << 20;
        Loaded m = new Loaded(this, c, messages * size);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        for (int i = 0; i < messages; i++) {
            sends.add(postSend(c, m.src.addr + (long) i * size, size, m.sr));
        }
        // no receive yet: the sockets fill and the sender stops part-way through the window, and through
        // a message; then the receives drain it
        long until = System.nanoTime() + 20_000_000L;
        while (System.nanoTime() < until) {
            if (!sends.isEmpty() && a.test(sends.peek())) {
                sends.poll();
            }
            LockSupport.parkNanos(1_000_000);
        }
        assertThat(sends).as("sends still waiting for their receives").isNotEmpty();
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        for (int i = 0; i < messages; i++) {
            recvs.add(postRecv(c, m.dst.addr + (long) i * size, size, m.rr));
        }
        drain(c, sends, recvs, m.dst);
        verify(m.dst, m.data, messages * size);
    }

    @Test
    void aReceiveIsNotDoneBeforeItsDataIsSent() {
        Channel c = connect(a, b);
        Loaded m = new Loaded(this, c, PAGE);
        NetRequest r = postRecv(c, m.dst.addr, PAGE, m.rr);
        for (int i = 0; i < 50; i++) {
            assertThat(b.test(r)).as("receive tested before anything was sent").isFalse();
            LockSupport.parkNanos(2_000_000);
        }
        NetRequest s = postSend(c, m.src.addr, PAGE, m.sr);
        drain(c, new ArrayDeque<>(List.of(s)), new ArrayDeque<>(List.of(r)), m.dst);
        verify(m.dst, m.data, PAGE);
    }

    @Test
    void manyMessagesInAWindowArriveIntactAndInOrder() {
        Channel c = connect(a, b);
        int messages = 48;
        int[] sizes = new int[messages];
        long[] offsets = new long[messages + 1];
        for (int i = 0; i < messages; i++) {
            sizes[i] = random.nextInt(256 * 1024) + 1;
            offsets[i + 1] = offsets[i] + sizes[i];
        }
        int total = (int) offsets[messages];
        Loaded m = new Loaded(this, c, total);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        ArrayDeque<Long> recvDst = new ArrayDeque<>();
        ScatterGather u = scatterGather();
        int posted = 0;
        int received = 0;
        int sent = 0;
        long deadline = System.nanoTime() + deadline().toNanos();
        while (received < messages) {
            while (posted < messages && sends.size() < 12 && recvs.size() < 12) {
                NetRequest r = b.irecv(c.recv(), m.dst.addr + offsets[posted], sizes[posted], posted, m.rr);
                if (r == null) {
                    break;
                }
                recvs.add(r);
                recvDst.add(m.dst.addr + offsets[posted]);
                sends.add(postSend(c, m.src.addr + offsets[posted], sizes[posted], m.sr));
                posted++;
            }
            if (!sends.isEmpty() && a.test(sends.peek())) {
                sends.poll();
                sent++;
            }
            if (!recvs.isEmpty() && b.test(recvs.peek())) {
                NetRequest r = recvs.poll();
                unpack(u, r, recvDst.poll(), m.dst.kind);
                b.consumed(c.recv(), r);
                received++;
            }
            checkDeadline(deadline, "window of " + messages + " messages: " + received + " received, " + sent + " sent");
            LockSupport.parkNanos(50_000);
        }
        verify(m.dst, m.data, total);
    }
}
