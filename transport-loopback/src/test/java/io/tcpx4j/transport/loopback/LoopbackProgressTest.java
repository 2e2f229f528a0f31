package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Progress;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Engines over the loopback transport with each kind of driver: their own threads, which block in the
 * kernel with requests out because the transport announces every completion (its I/O threads wake them)
 * or has put its sockets in their selectors (without I/O threads), or their callers' {@code progress()},
 * as a NIXL host drives them. Either way a chunked WRITE and READ of 4 MiB land every
 * byte, with the notification after the data; an injected completion delay, which nothing announces, is
 * polled through.
 */
class LoopbackProgressTest {

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

    private LoopbackTransport transport(LoopbackConfig.Faults faults) {
        return transport(faults, LoopbackConfig.defaults().ioThreads());
    }

    private LoopbackTransport transport(LoopbackConfig.Faults faults, int ioThreads) {
        LoopbackTransport t = new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false).withFaults(faults)
                .withIoThreads(ioThreads), null);
        closeables.add(t);
        return t;
    }

    private Engine engine(String name, LoopbackTransport t, Progress progress) {
        // inline off: the bytes must go through the transport's sockets
        Engine e = new Engine(io.tcpx4j.domain.EngineConfig.from(
                EngineConfig.defaults(name).withInlineLimit(0).withProgress(progress)), t, new HostMemory(),
                new CpuScatterGather(), Clock.SYSTEM);
        closeables.add(e);
        e.start();
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
    private record Pair(Engine a, Engine b, long src, long dst, long back, RegisteredMemory rs,
                        RegisteredMemory rback, RegisteredMemory rd) {

        Transfer write(byte[] notification) {
            return a.session("beta").write(List.of(rs.descriptor()), List.of(rd.descriptor()), notification);
        }

        Transfer read() {
            return a.session("beta").read(List.of(rback.descriptor()), List.of(rd.descriptor()), null);
        }
    }

    private Pair pair(Progress progress, LoopbackConfig.Faults faults, long seed) {
        return pair(progress, faults, LoopbackConfig.defaults().ioThreads(), seed);
    }

    private Pair pair(Progress progress, LoopbackConfig.Faults faults, int ioThreads, long seed) {
        Engine a = engine("alpha", transport(faults, ioThreads), progress);
        Engine b = engine("beta", transport(faults, ioThreads), progress);
        a.loadPeer("beta", b.connInfo());
        b.loadPeer("alpha", a.connInfo());
        long src = buffer(seed);
        long dst = buffer(seed + 1);
        long back = buffer(seed + 2);
        RegisteredMemory rs = a.register(MemoryDescriptor.dram(src, SIZE));
        RegisteredMemory rback = a.register(MemoryDescriptor.dram(back, SIZE));
        RegisteredMemory rd = b.register(MemoryDescriptor.dram(dst, SIZE));
        a.loadRemoteMetadata("beta", rd.publicMetadata());
        return new Pair(a, b, src, dst, back, rs, rback, rd);
    }

    @Test
    void theTransportAnnouncesEveryCompletionUnlessCompletionsAreDelayed() {
        LoopbackConfig threads = LoopbackConfig.defaults().withIoThreads(2);
        LoopbackConfig.Faults delayed = new LoopbackConfig.Faults(-1, Duration.ofMillis(1), false);
        assertThat(transport(LoopbackConfig.Faults.NONE, 0).capabilities())
                .contains(Capability.DRIVER_SOCKETS).doesNotContain(Capability.PROGRESS_WAKEUPS);
        assertThat(new LoopbackTransport(threads).capabilities())
                .contains(Capability.PROGRESS_WAKEUPS).doesNotContain(Capability.DRIVER_SOCKETS);
        assertThat(transport(delayed, 0).capabilities())
                .doesNotContain(Capability.PROGRESS_WAKEUPS, Capability.DRIVER_SOCKETS);
        assertThat(new LoopbackTransport(threads.withFaults(delayed)).capabilities())
                .doesNotContain(Capability.PROGRESS_WAKEUPS, Capability.DRIVER_SOCKETS);
    }

    @ParameterizedTest(name = "{0} I/O threads")
    @ValueSource(ints = {0, 2})
    void callersAloneMoveTheBytes(int ioThreads) {
        Pair p = pair(Progress.defaults().withDriver(Progress.Driver.CALLER), LoopbackConfig.Faults.NONE, ioThreads, 1);

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
    }

    @ParameterizedTest(name = "spin {0} us, {1} I/O threads")
    @CsvSource({"0, 0", "50, 0", "0, 2", "50, 2"})
    void threadsThatBlockWithRequestsOutMoveEveryByte(int spinMicros, int ioThreads) throws InterruptedException {
        Pair p = pair(Progress.defaults().withSpin(Duration.ofNanos(spinMicros * 1000L)), LoopbackConfig.Faults.NONE,
                ioThreads, 4 + spinMicros);
        for (int round = 0; round < 3; round++) {
            NativeMemory.put(p.src(), new byte[] {(byte) round}, 0, 1);
            Transfer w = p.write(("w" + round).getBytes());
            assertThat(w.await(Duration.ofSeconds(20))).as("write %s", w.error()).isEqualTo(TransferStatus.DONE);
            assertThat(bytes(p.dst())).isEqualTo(bytes(p.src()));
            Transfer r = p.read();
            assertThat(r.await(Duration.ofSeconds(20))).as("read %s", r.error()).isEqualTo(TransferStatus.DONE);
            assertThat(bytes(p.back())).isEqualTo(bytes(p.src()));
        }
    }

    @Test
    void completionsThatNothingAnnouncesArePolledThrough() throws InterruptedException {
        Pair p = pair(Progress.defaults().withSpin(Duration.ZERO),
                new LoopbackConfig.Faults(-1, Duration.ofMillis(2), false), 9);
        Transfer w = p.write(null);
        assertThat(w.await(Duration.ofSeconds(20))).as("write %s", w.error()).isEqualTo(TransferStatus.DONE);
        assertThat(bytes(p.dst())).isEqualTo(bytes(p.src()));
    }
}
