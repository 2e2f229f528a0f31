package io.tcpx4j.domain.bench;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Clock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The engine's host cost per chunk, both ends together (the sender's post and test, the receiver's
 * post, test and consume, window and ring bookkeeping), over a transport double that moves no data.
 * One WRITE of 64 MiB in 4 KiB chunks = 16,384 chunks per invocation; control frames and per-transfer
 * objects are amortised over them. Run with {@code -prof gc} for bytes allocated per chunk.
 *
 * <pre>
 * ./mvnw -B -q -pl domain -am test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
 * java -cp domain/target/test-classes:domain/target/classes:api/target/classes:$(cat /tmp/cp.txt) \
 *      org.openjdk.jmh.Main ChunkPathBench -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ChunkPathBench {

    static final long SIZE = 64L << 20;
    static final int CHUNK = 4096;
    static final int CHUNKS = (int) (SIZE / CHUNK);

    private Engine a;
    private Engine b;
    private long src;
    private long dst;
    private List<MemoryDescriptor> local;
    private List<MemoryDescriptor> remote;

    @Setup(Level.Trial)
    public void setUp() {
        a = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("bench-a").withChunkSize(CHUNK)),
                new NullTransportDouble(), new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        b = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("bench-b").withChunkSize(CHUNK)),
                new NullTransportDouble(), new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        a.startManual();
        b.startManual();
        a.loadPeer("bench-b", b.connInfo());
        src = NativeMemory.allocate(SIZE, 4096);
        dst = NativeMemory.allocate(SIZE, 4096);
        a.register(MemoryDescriptor.dram(src, SIZE));
        a.loadRemoteMetadata("bench-b", b.register(MemoryDescriptor.dram(dst, SIZE)).publicMetadata());
        local = List.of(MemoryDescriptor.dram(src, SIZE));
        remote = List.of(MemoryDescriptor.dram(dst, SIZE));
        writeOnce(); // connect outside the measurement
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        a.close();
        b.close();
        NativeMemory.free(src);
        NativeMemory.free(dst);
    }

    private Transfer writeOnce() {
        Transfer t = a.session("bench-b").write(local, remote, null);
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!t.status().isTerminal()) {
            a.progress();
            b.progress();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("transfer did not finish: " + t);
            }
        }
        return t;
    }

    @Benchmark
    @OperationsPerInvocation(CHUNKS)
    public Transfer chunk() {
        return writeOnce();
    }

    /**
     * Baseline in the same run: only the transport calls one chunk needs at both ends (isend, test,
     * irecv, test, consumed) on the same double, with no engine around them.
     */
    @Benchmark
    @OperationsPerInvocation(CHUNKS)
    public int transportCallsOnly() {
        int done = 0;
        for (int i = 0; i < CHUNKS; i++) {
            io.tcpx4j.domain.port.out.NetRequest s = bare.isend(bareSend, src + (long) i * CHUNK, CHUNK, i, null);
            done += bare.test(s) ? 1 : 0;
            io.tcpx4j.domain.port.out.NetRequest r = bare.irecv(bareRecv, dst + (long) i * CHUNK, CHUNK, i, null);
            done += bare.test(r) ? 1 : 0;
            bare.consumed(bareRecv, r);
        }
        return done;
    }

    private final NullTransportDouble bare = new NullTransportDouble();
    private final io.tcpx4j.domain.port.out.SendComm bareSend = bare.connect(0, new byte[128]);
    private final io.tcpx4j.domain.port.out.RecvComm bareRecv = bare.accept(bare.listen(0));

    public static void main(String[] args) throws Exception {
        org.openjdk.jmh.Main.main(args.length > 0 ? args : new String[] {ChunkPathBench.class.getSimpleName(), "-prof", "gc"});
    }
}
