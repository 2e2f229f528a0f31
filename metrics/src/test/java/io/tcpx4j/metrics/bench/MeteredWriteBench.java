package io.tcpx4j.metrics.bench;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.HostBuffer;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.Clock;
import io.tcpx4j.metrics.MeteredTransferEngine;
import io.tcpx4j.metrics.TransferMetrics;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What {@link MeteredTransferEngine} adds to a transfer: one 4 KiB WRITE of host memory (the bench's first
 * row: inline, by the default inline limit) between two engines in this JVM over the loopback transport,
 * each with its progress thread, from the session call until the caller sees it DONE. {@code plain} posts
 * through the engine, {@code metered} through the decorator recording into a Prometheus registry; the
 * ratio of the two scores is the recording's cost. Both run in one invocation of JMH, against the same
 * pair of engines and the same buffers; run with {@code -prof gc} for the bytes each allocates per
 * transfer.
 *
 * <pre>
 * ./mvnw -B -q -pl metrics -am test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt -Dmdep.includeScope=test
 * java -cp metrics/target/test-classes:metrics/target/classes:$(cat /tmp/cp.txt) \
 *      org.openjdk.jmh.Main MeteredWriteBench -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(2)
public class MeteredWriteBench {

    static final int BLOCK = 4096;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String TARGET = "bench-target";

    private LoopbackTransport initiatorTransport;
    private LoopbackTransport targetTransport;
    private Engine initiator;
    private Engine target;
    private TransferMetrics metrics;
    private TransferEngine metered;
    private HostBuffer src;
    private HostBuffer dst;
    private List<MemoryDescriptor> local;
    private List<MemoryDescriptor> remote;

    @Setup(Level.Trial)
    public void setUp() {
        initiatorTransport = new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false));
        targetTransport = new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false));
        initiator = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults("bench-initiator")),
                initiatorTransport, new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        target = new Engine(io.tcpx4j.domain.EngineConfig.from(EngineConfig.defaults(TARGET)), targetTransport,
                new HostMemory(), new CpuScatterGather(), Clock.SYSTEM);
        initiator.start();
        target.start();
        src = HostBuffer.allocate(BLOCK);
        dst = HostBuffer.allocate(BLOCK);
        initiator.register(src.descriptor());
        initiator.loadPeer(TARGET, target.connInfo());
        initiator.loadRemoteMetadata(TARGET, target.register(dst.descriptor()).publicMetadata());
        local = List.of(src.descriptor());
        remote = List.of(dst.descriptor());
        metrics = new TransferMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), initiator.name());
        metered = new MeteredTransferEngine(initiator, metrics);
        write(initiator); // connect outside the measurement
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        metrics.remove();
        initiator.close();
        target.close();
        initiatorTransport.close();
        targetTransport.close();
        src.close();
        dst.close();
    }

    private TransferStatus write(TransferEngine engine) {
        Transfer t = engine.session(TARGET).write(local, remote, null);
        TransferStatus status = engine.driveUntilEnded(t, TIMEOUT);
        if (status != TransferStatus.DONE) {
            throw new IllegalStateException("transfer ended " + status + ": " + t.error().orElse(null));
        }
        return status;
    }

    /** The engine alone. */
    @Benchmark
    public TransferStatus plain() {
        return write(initiator);
    }

    /** The same transfer through the decorator. */
    @Benchmark
    public TransferStatus metered() {
        return write(metered);
    }

    public static void main(String[] args) throws Exception {
        org.openjdk.jmh.Main.main(args.length > 0 ? args : new String[] {MeteredWriteBench.class.getSimpleName(), "-prof", "gc"});
    }
}
