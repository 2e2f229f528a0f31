package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.cli.fleet.Fleet;
import io.tcpx4j.cli.fleet.FleetNode;
import io.tcpx4j.cli.fleet.FleetOptions;
import io.tcpx4j.cli.fleet.FleetPlan;
import io.tcpx4j.cli.fleet.FleetRow;
import io.tcpx4j.api.Progress;
import io.tcpx4j.cli.layout.Stripes;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The bench's side of a fleet run ({@code --etcd-endpoints}): the rows of its settings as the fleet's
 * plan, its engines and memory as fleet nodes, and the fleet's rows as bench rows.
 *
 * <p>Thread-safe (stateless).
 */
final class FleetBench {

    private FleetBench() {
    }

    /**
     * Runs this process's worker; the rows over all workers, each also given to {@code onRow} as the
     * workers finish it. Its buffers go on the initiator's or the target's GPUs of {@code s}, as its role is.
     */
    static List<BenchRow> run(BenchSettings s, EngineOptions engine, GpuHost gpus, FleetOptions fleet,
                              int joinWaitSeconds, Consumer<BenchRow> onRow, BooleanSupplier stop, PrintStream log)
            throws IOException, InterruptedException {
        List<FleetPlan.Row> rows = new ArrayList<>();
        for (int batch : s.batchSizes()) {
            for (long block : s.blockSizes()) {
                rows.add(new FleetPlan.Row(block, batch, s.iterationsFor(block, batch), s.warmupFor(block, batch)));
            }
        }
        FleetPlan plan = new FleetPlan(s.op() == BenchSettings.Op.WRITE, s.transport().label(),
                s.initiatorMemory().name().toLowerCase(Locale.ROOT), rows, s.checkConsistency(), s.reversed(),
                s.initiatorDeviceCount(), s.targetDeviceCount());
        String bind = s.bindHost() != null ? s.bindHost() : fleet.localAddress();
        String id = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1);
        List<BenchRow> out = new ArrayList<>();
        MemoryKind memory = s.initiatorMemory();
        Fleet.run(fleet, plan, (rank, initiator) -> {
                    List<Integer> devices = initiator ? s.initiatorDevices() : s.targetDevices();
                    return new NodeOfBench(Node.start(
                            engine.engineConfig("bench-fleet-" + rank + "-" + id, bind,
                                    initiator && s.callerProgress() ? Progress.Driver.CALLER : Progress.Driver.THREAD),
                            engine.spec(bind, memory, gpus, devices.isEmpty() ? 0 : devices.get(0))), devices);
                },
                Duration.ofSeconds(joinWaitSeconds), stop, r -> {
                    BenchRow row = benchRow(r);
                    out.add(row);
                    onRow.accept(row);
                }, log);
        return out;
    }

    static BenchRow benchRow(FleetRow r) {
        Histogram h = r.latency();
        return new BenchRow(r.blockSize(), r.batchSize(), r.iterations(), r.bytes(), r.seconds(), r.gbps(),
                us(h.getMean()), us(h.getValueAtPercentile(50)), us(h.getValueAtPercentile(99)),
                us(h.getValueAtPercentile(99.9)), us(h.getMaxValue()),
                us(r.prep().getMean()), us(r.prep().getValueAtPercentile(99)),
                us(r.post().getMean()), us(r.post().getValueAtPercentile(99)),
                us(r.tx().getMean()), us(r.tx().getValueAtPercentile(99)), r.mismatches(), r.checkedPerGpu(), null,
                null, null, null);
    }

    private static double us(double nanos) {
        return nanos / 1e3;
    }

    /** A bench {@link Node} as the fleet sees it, its buffers on {@code devices}. */
    private record NodeOfBench(Node node, List<Integer> devices) implements FleetNode {

        @Override
        public TransferEngine engine() {
            return node.engine();
        }

        @Override
        public Stripes allocate(long bytes) {
            return node.memory().allocate(devices, bytes);
        }

        @Override
        public void free(Stripes buffers) {
            node.memory().free(buffers);
        }

        @Override
        public void fill(Stripes buffers, long first, long count, long block, long seed) {
            node.memory().fill(buffers, first, count, block, seed);
        }

        @Override
        public long verify(Stripes buffers, long first, long count, long block, long seed,
                           Map<Integer, Long> checkedPerGpu) {
            Verified v = node.memory().verify(buffers, first, count, block, seed);
            v.perGpu().forEach((gpu, n) -> checkedPerGpu.merge(gpu, n, Long::sum));
            return v.mismatches();
        }

        @Override
        public boolean awaitNotification(byte[] message, Duration timeout) {
            return node.awaitNotification(message, timeout);
        }

        @Override
        public boolean awaitQuiet(Duration timeout) {
            return node.awaitQuiet(timeout);
        }

        @Override
        public void close() {
            node.close();
        }
    }
}
