package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.memory.CpuUnpacker;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two engines without agent threads, moved only by their callers' {@code Engine.progress()}, as a NIXL
 * host drives them: with {@code callerDrives} the callers also run the loopback transport's socket turns
 * ({@code drive()}), without it the I/O threads do; either way a chunked WRITE and READ of 4 MiB land
 * every byte, with the notification after the data. With agent threads and no caller, {@code callerDrives}
 * lets each agent thread run the turns itself while its engine has requests out.
 */
class CallerDrivenLoopbackTest {

    private static final int SIZE = 4 << 20;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<Long> buffers = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        buffers.forEach(NativeMemory::free);
    }

    private LoopbackTransport transport(boolean callerDrives) {
        LoopbackTransport t = new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false)
                .withCallerDrives(callerDrives), null);
        closeables.add(t);
        return t;
    }

    private Engine engine(String name, LoopbackTransport t, boolean agentThread) {
        // inline off: the bytes must go through the transport's sockets
        Engine e = new Engine(EngineConfig.defaults(name).withInlineLimit(0), t, new HostMemory(), new CpuUnpacker(),
                Clock.SYSTEM);
        closeables.add(e);
        if (agentThread) {
            e.start();
        } else {
            e.startManual();
        }
        return e;
    }

    private long buffer(long seed) {
        long a = NativeMemory.allocate(SIZE, NativeMemory.PAGE);
        buffers.add(a);
        byte[] b = new byte[SIZE];
        new SplittableRandom(seed).nextBytes(b);
        NativeMemory.put(a, b, 0, SIZE);
        return a;
    }

    private static byte[] bytes(long address) {
        byte[] b = new byte[SIZE];
        NativeMemory.get(address, b, 0, SIZE);
        return b;
    }

    /** Calls progress() on both engines, as two polling hosts would, until {@code t} ends (20 s at most). */
    private static void drive(Engine a, Engine b, Transfer t) {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!t.status().isTerminal() && System.nanoTime() < deadline) {
            a.progress();
            b.progress();
        }
    }

    /** alpha and beta connected, alpha's source and read-back buffers and beta's destination registered. */
    private record Pair(LoopbackTransport ta, LoopbackTransport tb, Engine a, Engine b, long src, long dst, long back,
                        RegisteredMemory rs, RegisteredMemory rback, RegisteredMemory rd) {

        Transfer write(byte[] notification) {
            return a.session("beta").write(List.of(rs.descriptor()), List.of(rd.descriptor()), notification);
        }

        Transfer read() {
            return a.session("beta").read(List.of(rback.descriptor()), List.of(rd.descriptor()), null);
        }

        void assertTurns(boolean callerDrives, String who) {
            if (callerDrives) {
                assertThat(ta.callerTurns()).as("socket turns run by alpha's " + who).isPositive();
                assertThat(tb.callerTurns()).as("socket turns run by beta's " + who).isPositive();
            } else {
                assertThat(ta.callerTurns() + tb.callerTurns()).as("the I/O threads ran every turn").isZero();
            }
        }
    }

    private Pair pair(boolean callerDrives, boolean agentThreads, long seed) {
        LoopbackTransport ta = transport(callerDrives);
        LoopbackTransport tb = transport(callerDrives);
        Engine a = engine("alpha", ta, agentThreads);
        Engine b = engine("beta", tb, agentThreads);
        a.loadPeer("beta", b.connInfo());
        b.loadPeer("alpha", a.connInfo());
        long src = buffer(seed);
        long dst = buffer(seed + 1);
        long back = buffer(seed + 2);
        RegisteredMemory rs = a.register(MemoryDescriptor.dram(src, SIZE));
        RegisteredMemory rback = a.register(MemoryDescriptor.dram(back, SIZE));
        RegisteredMemory rd = b.register(MemoryDescriptor.dram(dst, SIZE));
        a.loadRemoteMetadata("beta", rd.publicMetadata());
        return new Pair(ta, tb, a, b, src, dst, back, rs, rback, rd);
    }

    @ParameterizedTest(name = "callers drive the sockets: {0}")
    @ValueSource(booleans = {true, false})
    void callersMoveTheBytesThroughTheTransportsSocketsWhenConfiguredTo(boolean callerDrives) {
        Pair p = pair(callerDrives, false, 1);

        Transfer w = p.write("w".getBytes());
        drive(p.a(), p.b(), w);
        assertThat(w.status()).as("write %s", w.error()).isEqualTo(TransferStatus.DONE);
        List<Notification> notes = new ArrayList<>();
        for (int i = 0; i < 1000 && notes.isEmpty(); i++) {
            p.b().progress();
            notes.addAll(p.b().drainNotifications());
        }
        assertThat(notes).containsExactly(new Notification("alpha", "w".getBytes()));
        assertThat(bytes(p.dst())).isEqualTo(bytes(p.src()));

        Transfer r = p.read();
        drive(p.a(), p.b(), r);
        assertThat(r.status()).as("read %s", r.error()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(p.back())).isEqualTo(bytes(p.src()));
        p.assertTurns(callerDrives, "caller");
    }

    @ParameterizedTest(name = "callers drive the sockets: {0}")
    @ValueSource(booleans = {true, false})
    void agentThreadsMoveTheSocketsThemselvesWhileRequestsAreOutWhenConfiguredTo(boolean callerDrives)
            throws InterruptedException {
        Pair p = pair(callerDrives, true, 4);

        Transfer w = p.write(null);
        assertThat(w.await(Duration.ofSeconds(20))).as("write %s", w.error()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(p.dst())).isEqualTo(bytes(p.src()));
        Transfer r = p.read();
        assertThat(r.await(Duration.ofSeconds(20))).as("read %s", r.error()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(p.back())).isEqualTo(bytes(p.src()));
        p.assertTurns(callerDrives, "agent thread");
    }

    @Test
    void afterCallersThatPolledWithoutPauseStopTheEnginesAndIoThreadsMoveTheNextTransfersOnTheirOwn()
            throws InterruptedException {
        Pair p = pair(true, true, 5);
        // transfers driven by both hosts' polling for long enough that the threads standing aside
        // park for their longest (StandAside)
        long until = System.nanoTime() + 200_000_000L;
        int driven = 0;
        while (System.nanoTime() < until || driven == 0) {
            Transfer w = p.write(null);
            drive(p.a(), p.b(), w);
            assertThat(w.status()).as("write %s", w.error()).isEqualTo(TransferStatus.DONE);
            driven++;
        }
        long turnsByCallers = p.ta().callerTurns() + p.tb().callerTurns();
        assertThat(turnsByCallers).isPositive();

        // nobody calls progress() from here on: a WRITE and a READ whose posts need the threads
        NativeMemory.put(p.src(), new byte[] {42}, 0, 1);
        Transfer w = p.write("after".getBytes());
        assertThat(w.await(Duration.ofSeconds(20))).as("write %s", w.error()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(p.dst())).isEqualTo(bytes(p.src()));
        Transfer r = p.read();
        assertThat(r.await(Duration.ofSeconds(20))).as("read %s", r.error()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(p.back())).isEqualTo(bytes(p.src()));
        assertThat(p.b().drainNotifications()).containsExactly(new Notification("alpha", "after".getBytes()));
    }
}
