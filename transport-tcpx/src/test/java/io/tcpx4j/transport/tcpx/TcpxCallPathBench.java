package io.tcpx4j.transport.tcpx;

import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The TCPX transport's calls for one chunk at both ends, through {@link TcpxTransport} into the C
 * test peer: isend, test until done, irecv, test until done, consumed (irecvConsumed), 4 KiB, one
 * chunk after the other on one send/recv comm pair. Reported per chunk; run with {@code -prof gc} for
 * bytes allocated per chunk.
 *
 * <p>{@code calls} is the call path of the per-chunk plugin calls: {@code TRAMPOLINE} (the JNI
 * trampolines, what the transport uses) or {@code GENERIC} (JNA's {@code Function.invoke}, the
 * fallback without the trampoline library), so the ratio of the two comes from one run.
 * {@code peer} is the test peer build: {@code v7-nullio} moves no bytes (each request completes at its
 * first test), so it measures the binding alone (transport checks, ring bookkeeping, the JNI or JNA
 * call, the peer's own slot bookkeeping); {@code v7} moves the chunk over loopback TCP, and its
 * socket system calls dominate. The peer's WARN per host-memory receive is turned off
 * (TCPX4J_TESTPEER_NO_HOST_WARN): receives into GPU memory do not log it.
 *
 * <pre>
 * ./mvnw -B -q -pl transport-tcpx -am test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
 * java -cp transport-tcpx/target/test-classes:transport-tcpx/target/classes:$(cat /tmp/cp.txt) \
 *      org.openjdk.jmh.Main TcpxCallPathBench -prof gc
 * </pre>
 * Run from the repository root or from transport-tcpx (it finds the peers under
 * {@code [transport-tcpx/]target/native}, or where {@code -Dtcpx4j.testpeer.dir} says).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class TcpxCallPathBench {

    static final int CHUNK = 4096;
    static final int CHUNKS = 1024;

    @Param({"v7-nullio", "v7"})
    public String peer;

    @Param({"TRAMPOLINE", "GENERIC"})
    public String calls;

    private TcpxTransport transport;
    private SendComm send;
    private RecvComm recv;
    private TcpxRegistration sendReg;
    private TcpxRegistration recvReg;
    private long src;
    private long dst;

    @Setup(Level.Trial)
    public void setUp() {
        LibC.setenv("TCPX4J_TESTPEER_NO_HOST_WARN", "1"); // read by the peer's init, below
        TcpxOptions o = TcpxOptions.defaults().withLibrary(peerPath(peer)).withProbeInChildProcess(false);
        NetPlugin plugin = PluginLoader.load(o).withCallPath(NetPlugin.CallPath.valueOf(calls));
        transport = new TcpxTransport(plugin, new HostMemory(), TcpxRequestLayout.X86_64_2024, Duration.ofSeconds(10));
        Listener l = transport.listen(0);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (send == null || recv == null) {
            if (send == null) {
                send = transport.connect(0, l.handle());
            }
            if (recv == null) {
                recv = transport.accept(l);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("test peer did not connect");
            }
        }
        transport.closeListen(l);
        src = NativeMemory.allocate(CHUNK, 4096);
        dst = NativeMemory.allocate(CHUNK, 4096);
        NativeMemory.fill(src, CHUNK, (byte) 0x5a);
        sendReg = (TcpxRegistration) transport.register(send, src, CHUNK, PtrType.HOST);
        recvReg = (TcpxRegistration) transport.register(recv, dst, CHUNK, PtrType.HOST);
        chunks(); // the first chunk through a fresh comm outside the measurement
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        transport.close();
        NativeMemory.free(src);
        NativeMemory.free(dst);
    }

    @Benchmark
    @OperationsPerInvocation(CHUNKS)
    public int chunks() {
        int tests = 0;
        for (int i = 0; i < CHUNKS; i++) {
            NetRequest s = transport.isend(send, src, CHUNK, i, sendReg);
            if (s == null) {
                throw new IllegalStateException("isend BUSY with nothing outstanding");
            }
            do {
                tests++;
            } while (!transport.test(s));
            NetRequest r = transport.irecv(recv, dst, CHUNK, i, recvReg);
            if (r == null) {
                throw new IllegalStateException("irecv BUSY with nothing outstanding");
            }
            do {
                tests++;
            } while (!transport.test(r));
            transport.consumed(recv, r);
        }
        return tests;
    }

    static String peerPath(String variant) {
        String name = "libtcpx4j-net-testpeer-" + variant + ".so";
        String dir = System.getProperty("tcpx4j.testpeer.dir");
        for (Path d : dir != null ? new Path[] {Path.of(dir)}
                : new Path[] {Path.of("target", "native"), Path.of("transport-tcpx", "target", "native")}) {
            if (Files.exists(d.resolve(name))) {
                return d.resolve(name).toAbsolutePath().toString();
            }
        }
        throw new IllegalStateException(name + " not found: build the test peers first (see this class's Javadoc)");
    }

    public static void main(String[] args) throws Exception {
        org.openjdk.jmh.Main.main(args.length > 0 ? args
                : new String[] {TcpxCallPathBench.class.getSimpleName(), "-prof", "gc"});
    }
}
