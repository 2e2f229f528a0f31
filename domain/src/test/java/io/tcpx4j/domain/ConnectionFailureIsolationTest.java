package io.tcpx4j.domain;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.domain.port.out.ForwardingNetTransport;
import io.tcpx4j.domain.testing.InMemoryFabric;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fault no check foresaw in one connection's handling (a RuntimeException out of its duty cycle)
 * fails that connection alone: the agent's other connections and their transfers in flight go on.
 */
class ConnectionFailureIsolationTest {

    private static final int SIZE = 1 << 20;

    /** Throws an unchecked error from {@code isend} on the comms to one peer once armed. */
    private static final class FaultyTransportDouble extends ForwardingNetTransport {
        final Set<SendComm> doomed = ConcurrentHashMap.newKeySet();
        volatile boolean recording = true;
        volatile boolean armed;

        FaultyTransportDouble(NetTransport delegate) {
            super(delegate);
        }

        @Override
        public SendComm connect(int device, byte[] handle, DriverSelector driver) {
            SendComm c = super.connect(device, handle, driver);
            if (c != null && recording) {
                doomed.add(c);
            }
            return c;
        }

        @Override
        public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration) {
            if (armed && doomed.contains(comm)) {
                throw new IllegalStateException("a fault no check foresaw");
            }
            return super.isend(comm, address, size, tag, registration);
        }
    }

    @Test
    void anUncheckedErrorInOneConnectionFailsItAloneAndTheOthersTransferGoesOn() throws Exception {
        long src = NativeMemory.allocate(SIZE, 4096);
        long dstB = NativeMemory.allocate(SIZE, 4096);
        long dstC = NativeMemory.allocate(SIZE, 4096);
        try (InMemoryFabric fabric = new InMemoryFabric()) {
            FaultyTransportDouble ta = new FaultyTransportDouble(fabric.newTransport());
            NetTransport tb = fabric.newTransport();
            NetTransport tc = fabric.newTransport();
            // no inline transfers: every byte goes through the transport's send comms
            EngineConfig base = EngineConfig.defaults("x").withInlineLimit(0);
            try (Engine a = engine(base.withName("a"), ta);
                 Engine b = engine(base.withName("b"), tb);
                 Engine c = engine(base.withName("c"), tc)) {
                a.start();
                b.start();
                c.startManual(); // c moves only when the test pumps it: a's transfer to c stays in flight
                a.loadPeer("b", b.connInfo());
                a.loadPeer("c", c.connInfo());
                b.loadPeer("a", a.connInfo());
                c.loadPeer("a", a.connInfo());
                MemoryDescriptor local = MemoryDescriptor.dram(src, SIZE);
                MemoryDescriptor toB = MemoryDescriptor.dram(dstB, SIZE);
                MemoryDescriptor toC = MemoryDescriptor.dram(dstC, SIZE);
                a.register(local);
                a.loadRemoteMetadata("b", b.register(toB).publicMetadata());
                a.loadRemoteMetadata("c", c.register(toC).publicMetadata());

                // a's comms to b are the first it connects
                assertThat(a.session("b").write(List.of(local), List.of(toB), null).await(Duration.ofSeconds(20)))
                        .isEqualTo(TransferStatus.DONE);
                ta.recording = false;
                Transfer first = a.session("c").write(List.of(local), List.of(toC), null);
                pumpUntilEnded(c, first);
                assertThat(first.status()).isEqualTo(TransferStatus.DONE);

                NativeMemory.fill(src, SIZE, (byte) 0x3C);
                Transfer toCInFlight = a.session("c").write(List.of(local), List.of(toC), null);
                ta.armed = true;
                Transfer toBFailing = a.session("b").write(List.of(local), List.of(toB), null);
                assertThat(toBFailing.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.FAILED);
                assertThat(toBFailing.error()).map(TransferException::code).contains(TransferException.Code.BACKEND);

                pumpUntilEnded(c, toCInFlight);
                assertThat(toCInFlight.status()).isEqualTo(TransferStatus.DONE);
                byte[] got = new byte[SIZE];
                NativeMemory.get(dstC, got, 0, SIZE);
                assertThat(got).containsOnly((byte) 0x3C);
            }
        } finally {
            NativeMemory.free(src);
            NativeMemory.free(dstB);
            NativeMemory.free(dstC);
        }
    }

    private static Engine engine(EngineConfig config, NetTransport transport) {
        return new Engine(io.tcpx4j.domain.EngineConfig.from(config), transport, new HostMemory(),
                new CpuScatterGather(), Clock.SYSTEM);
    }

    private static void pumpUntilEnded(Engine e, Transfer x) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (x.status() == TransferStatus.IN_PROGRESS && System.nanoTime() < deadline) {
            e.progress();
        }
    }
}
