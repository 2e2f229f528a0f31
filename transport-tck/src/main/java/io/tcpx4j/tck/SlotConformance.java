package io.tcpx4j.tck;

import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.Unpacker;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

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
        Buf src = host(n * 1000);
        Buf dst = host(n * 1000);
        byte[] data = fillRandom(src, n * 1000);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            NetRequest s = a.isend(c.send(), src.addr + i * 1000L, 1000, i, sr);
            assertThat(s).as("send %d of %d", i + 1, n).isNotNull();
            sends.add(s);
        }
        assertThat(a.isend(c.send(), src.addr, 1000, 99, sr)).as("17th send without any completed").isNull();
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            recvs.add(postRecv(c, dst.addr + i * 1000L, 1000, rr));
        }
        awaitDone(a, sends.poll(), "first send");
        NetRequest extra = a.isend(c.send(), src.addr, 1000, 99, sr);
        assertThat(extra).as("a send slot frees when its send tests done").isNotNull();
        drain(c, sends, recvs, dst);
        // The extra send may wait for its receive (the SPI does not promise buffering), so both go together.
        NetRequest extraRecv = postRecv(c, dst.addr, 1000, rr);
        drain(c, new ArrayDeque<>(List.of(extra)), new ArrayDeque<>(List.of(extraRecv)), dst);
        verify(dst, data, n * 1000);
    }

    @Test
    void aReceiveHoldsItsSlotUntilConsumed() {
        Channel c = connect(a, b);
        int n = NetTransport.MAX_REQUESTS;
        Buf src = host(n * 512);
        Buf dst = host(n * 512);
        byte[] data = fillRandom(src, n * 512);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        List<NetRequest> recvs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            recvs.add(postRecv(c, dst.addr + i * 512L, 512, rr));
        }
        assertThat(b.irecv(c.recv(), dst.addr, 512, 0, rr)).as("17th receive").isNull();
        for (int i = 0; i < n; i++) {
            NetRequest s = postSend(c, src.addr + i * 512L, 512, sr);
            awaitDone(a, s, "send " + i);
        }
        for (int i = 0; i < n; i++) {
            awaitDone(b, recvs.get(i), "receive " + i);
        }
        assertThat(b.irecv(c.recv(), dst.addr, 512, 0, rr)).as("17th receive: all done, none consumed").isNull();
        Unpacker u = unpacker();
        unpack(u, recvs.get(0), dst.addr, dst.kind);
        b.consumed(c.recv(), recvs.get(0));
        NetRequest again = b.irecv(c.recv(), dst.addr + 15 * 512L, 512, 0, rr);
        assertThat(again).as("a consumed receive frees its slot").isNotNull();
        tracked(again, dst.addr + 15 * 512L);
        for (int i = 1; i < n; i++) {
            unpack(u, recvs.get(i), dst.addr + i * 512L, dst.kind);
            b.consumed(c.recv(), recvs.get(i));
        }
        verify(dst, data, n * 512);
        // the send is tested too: TCPX moves a send's data only from inside test()
        NetRequest last = postSend(c, src.addr + 15 * 512L, 512, sr);
        drain(c, new ArrayDeque<>(List.of(last)), new ArrayDeque<>(List.of(again)), dst);
        verify(dst, data, n * 512);
    }

    @Test
    void testAndConsumeAreFifo() {
        Channel c = connect(a, b);
        Buf src = host(2 * PAGE);
        Buf dst = host(2 * PAGE);
        byte[] data = fillRandom(src, 2 * PAGE);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r0 = postRecv(c, dst.addr, PAGE, rr);
        NetRequest r1 = postRecv(c, dst.addr + PAGE, PAGE, rr);
        expectCode(() -> b.test(r1), Code.INVALID_PARAM);
        expectCode(() -> b.consumed(c.recv(), r0), Code.INVALID_PARAM);
        NetRequest s0 = postSend(c, src.addr, PAGE, sr);
        NetRequest s1 = postSend(c, src.addr + PAGE, PAGE, sr);
        LockSupport.parkNanos(20_000_000);
        expectCode(() -> a.test(s1), Code.INVALID_PARAM);
        awaitDone(a, s0, "send 0");
        awaitDone(a, s1, "send 1");
        awaitDone(b, r0, "receive 0");
        awaitDone(b, r1, "receive 1");
        Unpacker u = unpacker();
        unpack(u, r1, dst.addr + PAGE, dst.kind);
        expectCode(() -> b.consumed(c.recv(), r1), Code.INVALID_PARAM);
        unpack(u, r0, dst.addr, dst.kind);
        b.consumed(c.recv(), r0);
        b.consumed(c.recv(), r1);
        verify(dst, data, 2 * PAGE);
    }

    @Test
    void tagsAreIgnoredAndMessagesMatchInPostingOrder() {
        Channel c = connect(a, b);
        int size = 10_000;
        Buf src = host(3 * size);
        Buf dst = host(3 * size);
        byte[] data = fillRandom(src, 3 * size);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        for (int i = 0; i < 3; i++) {
            long d = dst.addr + (long) i * size;
            recvs.add(tracked(require(b.irecv(c.recv(), d, size, 3 - i, rr), "irecv"), d));
        }
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        for (int i = 0; i < 3; i++) {
            sends.add(require(a.isend(c.send(), src.addr + (long) i * size, size, 1 + i, sr), "isend"));
        }
        drain(c, sends, recvs, dst);
        verify(dst, data, 3 * size);
    }

    @Test
    void postingNeverWaitsForThePeer() {
        Channel c = connect(a, b);
        int size = 4 << 20;
        Buf src = host(size);
        Buf dst = host(size);
        byte[] data = fillRandom(src, size);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        long t0 = System.nanoTime();
        NetRequest s = postSend(c, src.addr, size, sr);
        boolean sent = a.test(s); // kernel buffers may hold all of it; then the send is done (and recycled)
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("isend + test of 4 MiB with no receive posted")
                .isLessThan(Duration.ofSeconds(1));
        NetRequest r = postRecv(c, dst.addr, size, rr);
        drain(c, sent ? new ArrayDeque<>() : new ArrayDeque<>(List.of(s)), new ArrayDeque<>(List.of(r)), dst);
        verify(dst, data, size);
    }

    @Test
    void aWindowOfSendsPostedAheadOfItsReceivesArrivesIntact() {
        Channel c = connect(a, b);
        int messages = 12;
        int size = 1 << 20;
        Buf src = host(messages * size);
        Buf dst = host(messages * size);
        byte[] data = fillRandom(src, messages * size);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        for (int i = 0; i < messages; i++) {
            sends.add(postSend(c, src.addr + (long) i * size, size, sr));
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
            recvs.add(postRecv(c, dst.addr + (long) i * size, size, rr));
        }
        drain(c, sends, recvs, dst);
        verify(dst, data, messages * size);
    }

    @Test
    void aReceiveIsNotDoneBeforeItsDataIsSent() {
        Channel c = connect(a, b);
        Buf src = host(PAGE);
        Buf dst = host(PAGE);
        byte[] data = fillRandom(src, PAGE);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        NetRequest r = postRecv(c, dst.addr, PAGE, rr);
        for (int i = 0; i < 50; i++) {
            assertThat(b.test(r)).as("receive tested before anything was sent").isFalse();
            LockSupport.parkNanos(2_000_000);
        }
        NetRequest s = postSend(c, src.addr, PAGE, sr);
        drain(c, new ArrayDeque<>(List.of(s)), new ArrayDeque<>(List.of(r)), dst);
        verify(dst, data, PAGE);
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
        Buf src = host(total);
        Buf dst = host(total);
        byte[] data = fillRandom(src, total);
        poison(dst, data);
        MemoryRegistration sr = a.register(c.send(), src.addr, src.capacity, PtrType.HOST);
        MemoryRegistration rr = b.register(c.recv(), dst.addr, dst.capacity, PtrType.HOST);
        ArrayDeque<NetRequest> sends = new ArrayDeque<>();
        ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
        ArrayDeque<Long> recvDst = new ArrayDeque<>();
        Unpacker u = unpacker();
        int posted = 0;
        int received = 0;
        int sent = 0;
        long deadline = System.nanoTime() + deadline().toNanos();
        while (received < messages) {
            while (posted < messages && sends.size() < 12 && recvs.size() < 12) {
                NetRequest r = b.irecv(c.recv(), dst.addr + offsets[posted], sizes[posted], posted, rr);
                if (r == null) {
                    break;
                }
                recvs.add(r);
                recvDst.add(dst.addr + offsets[posted]);
                sends.add(postSend(c, src.addr + offsets[posted], sizes[posted], sr));
                posted++;
            }
            if (!sends.isEmpty() && a.test(sends.peek())) {
                sends.poll();
                sent++;
            }
            if (!recvs.isEmpty() && b.test(recvs.peek())) {
                NetRequest r = recvs.poll();
                unpack(u, r, recvDst.poll(), dst.kind);
                b.consumed(c.recv(), r);
                received++;
            }
            checkDeadline(deadline, "window of " + messages + " messages: " + received + " received, " + sent + " sent");
            LockSupport.parkNanos(50_000);
        }
        verify(dst, data, total);
    }
}
