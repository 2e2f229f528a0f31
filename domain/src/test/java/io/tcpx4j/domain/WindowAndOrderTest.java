package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Watches every call the engine makes on its transport and checks the window and FIFO rules from the
 * outside, independent of the transport's own enforcement.
 */
class WindowAndOrderTest {

    /** Records outstanding requests per comm and the order of posts, tests and consumes. */
    static final class WatchingTransport extends ForwardingNetTransport {
        final Map<Comm, ArrayDeque<NetRequest>> untested = new IdentityHashMap<>();
        final Map<Comm, ArrayDeque<NetRequest>> unconsumed = new IdentityHashMap<>();
        final Map<NetRequest, Comm> owner = new IdentityHashMap<>();
        final Map<Comm, Integer> outstanding = new IdentityHashMap<>();
        int maxOutstanding;
        int maxSendsOutstanding;
        final List<String> violations = new ArrayList<>();

        WatchingTransport(NetTransport d) {
            super(d);
        }

        private synchronized void posted(Comm c, NetRequest r, boolean send) {
            untested.computeIfAbsent(c, k -> new ArrayDeque<>()).add(r);
            if (!send) {
                unconsumed.computeIfAbsent(c, k -> new ArrayDeque<>()).add(r);
            }
            owner.put(r, c);
            int n = outstanding.merge(c, 1, Integer::sum);
            maxOutstanding = Math.max(maxOutstanding, n);
            if (send) {
                maxSendsOutstanding = Math.max(maxSendsOutstanding, n);
            }
        }

        @Override
        public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration mr) {
            NetRequest r = delegate.isend(comm, address, size, tag, mr);
            if (r != null) {
                posted(comm, r, true);
            }
            return r;
        }

        @Override
        public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration mr) {
            NetRequest r = delegate.irecv(comm, address, size, tag, mr);
            if (r != null) {
                posted(comm, r, false);
            }
            return r;
        }

        @Override
        public synchronized boolean test(NetRequest request) {
            Comm c = owner.get(request);
            if (untested.get(c).peek() != request) {
                violations.add("test of a request that is not the oldest untested one");
            }
            boolean done = delegate.test(request);
            if (done) {
                untested.get(c).poll();
                if (c instanceof SendComm) {
                    outstanding.merge(c, -1, Integer::sum);
                }
            }
            return done;
        }

        @Override
        public synchronized void consumed(RecvComm comm, NetRequest request) {
            if (unconsumed.get(comm).peek() != request) {
                violations.add("consume out of order");
            }
            unconsumed.get(comm).poll();
            outstanding.merge(comm, -1, Integer::sum);
            delegate.consumed(comm, request);
        }

    }

    @Test
    void windowsStayWithinSixteenAndTheSendWindowAndEveryCallIsFifo() {
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            WatchingTransport ta = new WatchingTransport(fabric.newTransport());
            WatchingTransport tb = new WatchingTransport(fabric.newTransport());
            EngineConfig ca = EngineConfig.defaults("alpha").withChunkSize(4096).withWindows(12, 16);
            EngineConfig cb = EngineConfig.defaults("beta").withChunkSize(4096).withWindows(12, 16);
            Engine a = new Engine(io.tcpx4j.domain.EngineConfig.from(ca), ta, new HostMemory(), new CpuScatterGather(),
                    Clock.SYSTEM);
            Engine b = new Engine(io.tcpx4j.domain.EngineConfig.from(cb), tb, new HostMemory(), new CpuScatterGather(),
                    Clock.SYSTEM);
            long size = 1 << 20;
            long x = NativeMemory.allocate(size, 4096);
            long y = NativeMemory.allocate(size, 4096);
            try {
                a.startManual();
                b.startManual();
                a.loadPeer("beta", b.connInfo());
                b.loadPeer("alpha", a.connInfo());
                a.register(MemoryDescriptor.dram(x, size));
                b.register(MemoryDescriptor.dram(y, size));
                a.loadRemoteMetadata("beta", b.register(MemoryDescriptor.dram(y, size)).publicMetadata());
                b.loadRemoteMetadata("alpha", a.register(MemoryDescriptor.dram(x, size)).publicMetadata());
                List<Transfer> ts = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    // 256 chunks each way per transfer: far more than any window
                    ts.add(a.session("beta").write(List.of(MemoryDescriptor.dram(x, size)), List.of(MemoryDescriptor.dram(y, size)), null));
                    ts.add(b.session("alpha").write(List.of(MemoryDescriptor.dram(y, size)), List.of(MemoryDescriptor.dram(x, size)), null));
                    ts.add(a.session("beta").read(List.of(MemoryDescriptor.dram(x, size)), List.of(MemoryDescriptor.dram(y, size)), null));
                }
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!ts.stream().allMatch(t -> t.status().isTerminal()) && System.nanoTime() < deadline) {
                    a.progress();
                    b.progress();
                }
                assertThat(ts).allMatch(t -> t.status() == TransferStatus.DONE);
                for (WatchingTransport t : List.of(ta, tb)) {
                    assertThat(t.violations).isEmpty();
                    assertThat(t.maxOutstanding).isLessThanOrEqualTo(NetTransport.MAX_REQUESTS);
                    assertThat(t.maxSendsOutstanding).isLessThanOrEqualTo(12);
                    // the windows were really exercised, not trivially respected
                    assertThat(t.maxOutstanding).isGreaterThanOrEqualTo(12);
                }
            } finally {
                a.close();
                b.close();
                NativeMemory.free(x);
                NativeMemory.free(y);
            }
        }
    }
}
