package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuUnpacker;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Engine#progress()}: a caller's thread runs the duty cycle, alone (no agent thread) or taking
 * turns with the agent thread and other callers.
 */
class CallerDrivenProgressTest {

    private static final int SIZE = 4 << 20;

    @Test
    void callersAloneMoveEveryByteWithoutAnAgentThread() {
        try (Pair p = new Pair(false)) {
            for (int round = 0; round < 3; round++) {
                byte[] data = p.fill(round);
                Transfer x = p.a.session("beta").write(List.of(p.local), List.of(p.remote), ("n" + round).getBytes());
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (x.status() == TransferStatus.IN_PROGRESS && System.nanoTime() < deadline) {
                    p.a.progress();
                    p.b.progress();
                }
                assertThat(x.status()).isEqualTo(TransferStatus.DONE);
                assertThat(p.received()).isEqualTo(data);
                assertThat(p.b.drainNotifications()).extracting(n -> new String(n.message())).containsExactly("n" + round);
            }
        }
    }

    @Test
    void callersAndTheAgentThreadTakeTurnsWithoutLosingAByte() throws Exception {
        try (Pair p = new Pair(true)) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> pollers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        p.a.progress();
                        p.b.progress();
                    }
                });
                t.start();
                pollers.add(t);
            }
            try {
                for (int round = 0; round < 10; round++) {
                    byte[] data = p.fill(round);
                    Transfer x = p.a.session("beta").write(List.of(p.local), List.of(p.remote), null);
                    assertThat(x.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.DONE);
                    assertThat(p.received()).isEqualTo(data);
                }
            } finally {
                stop.set(true);
                for (Thread t : pollers) {
                    t.join();
                }
            }
            assertThat(p.a.stats().outstandingRequests()).isZero();
        }
    }

    @Test
    void progressAfterCloseDoesNothing() {
        Pair p = new Pair(true);
        p.close();
        assertThat(p.a.progress()).isZero();
    }

    private static final class Pair implements AutoCloseable {
        final InMemoryFabric fabric = new InMemoryFabric();
        final NetTransport ta = fabric.newTransport();
        final NetTransport tb = fabric.newTransport();
        final Engine a;
        final Engine b;
        final long src = NativeMemory.allocate(SIZE, 4096);
        final long dst = NativeMemory.allocate(SIZE, 4096);
        final MemoryDescriptor local = MemoryDescriptor.dram(src, SIZE);
        final MemoryDescriptor remote = MemoryDescriptor.dram(dst, SIZE);
        private boolean closed;

        Pair(boolean threads) {
            a = new Engine(EngineConfig.defaults("alpha"), ta, new HostMemory(), new CpuUnpacker(), Clock.SYSTEM);
            b = new Engine(EngineConfig.defaults("beta"), tb, new HostMemory(), new CpuUnpacker(), Clock.SYSTEM);
            if (threads) {
                a.start();
                b.start();
            } else {
                a.startManual();
                b.startManual();
            }
            a.loadPeer("beta", b.connInfo());
            b.loadPeer("alpha", a.connInfo());
            a.register(local);
            a.loadRemoteMetadata("beta", b.register(remote).publicMetadata());
        }

        byte[] fill(int seed) {
            byte[] data = new byte[SIZE];
            new Random(seed).nextBytes(data);
            NativeMemory.put(src, data, 0, SIZE);
            NativeMemory.fill(dst, SIZE, (byte) 0x5A);
            return data;
        }

        byte[] received() {
            byte[] got = new byte[SIZE];
            NativeMemory.get(dst, got, 0, SIZE);
            return got;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            a.close();
            b.close();
            ta.close();
            tb.close();
            fabric.close();
            NativeMemory.free(src);
            NativeMemory.free(dst);
        }
    }
}
