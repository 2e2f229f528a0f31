package io.tcpx4j.cli;

import io.tcpx4j.api.ByteSize;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import org.HdrHistogram.Histogram;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The initiator's measurement loop, the same for embedded and two-host runs. For every batch size and
 * block size (one row) it posts warm-up transfers, then measured ones one at a time, each waited for
 * before the next (like nixlbench with one thread), and records per transfer:
 * <ul>
 *   <li>prep: building the descriptor lists and the session;</li>
 *   <li>post: the {@code write}/{@code read} call (validation and enqueue);</li>
 *   <li>latency: from the start of prep until the transfer is DONE.</li>
 * </ul>
 * Bandwidth is the row's bytes over the wall time of its measured transfers. The last transfer of a
 * row carries a notification so that the target knows when a WRITE row has landed.
 *
 * <p><b>Not thread-safe.</b>
 */
final class BenchRunner {

    private static final System.Logger LOG = System.getLogger(BenchRunner.class.getName());
    /** A single transfer that takes longer than this fails the run. */
    static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(60);
    /** The warm-up goes on until the JIT has finished nothing for this long ... */
    static final long JIT_QUIET_NANOS = 300_000_000L;
    /** ... in rounds over every shape of at most this long ... */
    static final long WARMUP_ROUND_NANOS = 200_000_000L;
    /** ... for at most this many times the {@code --warmup-seconds} asked for, in all. */
    static final int WARMUP_CAP = 10;

    private final BenchSettings settings;
    private final Node initiator;
    private final TargetHandle target;
    private final Progress progress;
    private final RawBaseline baseline;
    private final Consumer<BenchRow> onRow;
    private final long runId = ThreadLocalRandom.current().nextLong();
    private byte[] lastNotification;
    private volatile boolean stopRequested;

    BenchRunner(BenchSettings settings, Node initiator, TargetHandle target, Progress progress) {
        this(settings, initiator, target, progress, null, r -> { });
    }

    /**
     * @param baseline measures each row's raw TCP ceiling right after the row (null: none)
     * @param onRow    told of each row as soon as it is finished (the table prints it)
     */
    BenchRunner(BenchSettings settings, Node initiator, TargetHandle target, Progress progress, RawBaseline baseline,
                Consumer<BenchRow> onRow) {
        this.settings = settings;
        this.initiator = initiator;
        this.target = target;
        this.progress = progress;
        this.baseline = baseline;
        this.onRow = onRow;
    }

    /**
     * Ends the run after the transfer in progress: the row in progress is dropped, {@link #run()}
     * returns the rows finished so far. Callable from any thread (a signal handler).
     */
    void stop() {
        stopRequested = true;
    }

    /** Whether {@link #stop()} was called. */
    boolean stopped() {
        return stopRequested;
    }

    /**
     * Runs every row and returns them in order, or the rows finished before {@link #stop()}. Throws
     * {@link TransferException} if a transfer fails.
     */
    List<BenchRow> run() throws InterruptedException {
        initiator.engine().loadPeer(target.name(), target.connInfo());
        initiator.engine().loadRemoteMetadata(target.name(), target.metadata());
        MemoryDescriptor remote = target.buffer();
        MemoryDescriptor local = initiator.allocate(settings.bufferBytes());
        try (var registration = initiator.engine().register(local)) {
            long total = 0;
            for (int batch : settings.batchSizes()) {
                for (long block : settings.blockSizes()) {
                    total += (settings.iterationsFor(block, batch) + settings.warmupFor(block, batch))
                            * progressWeight(block, batch);
                }
            }
            List<BenchRow> rows = new ArrayList<>();
            if (!warmUp(local, remote)) {
                return rows;
            }
            progress.start(total);
            int rowIndex = 0;
            int rowCount = settings.batchSizes().size() * settings.blockSizes().size();
            rowLoop:
            for (int batch : settings.batchSizes()) {
                for (long block : settings.blockSizes()) {
                    BenchRow r = row(rowIndex++, block, batch, local, remote);
                    if (r == null) {
                        break rowLoop;
                    }
                    if (baseline != null) {
                        r = withBaseline(r);
                    }
                    rows.add(r);
                    onRow.accept(r);
                    LOG.log(System.Logger.Level.DEBUG, "bench row {0} of {1} done: {2} x {3}", rows.size(), rowCount,
                            block, batch);
                }
            }
            progress.finish();
            target.finish(lastNotification);
            return rows;
        } finally {
            progress.finish();
            // nothing is in flight: every transfer was awaited, or the engine failed it
            if (initiator.awaitQuiet(Duration.ofSeconds(10))) {
                initiator.free(local);
            }
        }
    }

    /**
     * Transfers of every row's shape, each for an equal share of {@code --warmup-seconds} (at least one),
     * before the first row, each shape followed by a few raw baseline transfers of its size: the JVM
     * compiles the engines' and the baseline's paths after thousands of runs, and a row measured before
     * that reads slower than the same row measured later. Then further rounds over the shapes, each at
     * most {@link #WARMUP_ROUND_NANOS}, until the JIT has finished nothing for {@link #JIT_QUIET_NANOS}
     * ({@link JitQuiet}), the whole warm-up taking at most {@link #WARMUP_CAP} times the seconds asked
     * for. False when stopped meanwhile.
     */
    private boolean warmUp(MemoryDescriptor local, MemoryDescriptor remote) throws InterruptedException {
        if (settings.warmupSeconds() <= 0) {
            return true;
        }
        int shapes = settings.batchSizes().size() * settings.blockSizes().size();
        long asked = (long) (settings.warmupSeconds() * 1e9);
        long share = asked / shapes;
        long roundShare = Math.min(share, WARMUP_ROUND_NANOS / shapes);
        JitQuiet jit = JitQuiet.ofThisJvm();
        long start = System.nanoTime();
        long cap = start + WARMUP_CAP * asked;
        long transfers = 0;
        int rounds = 0;
        progress.start(asked);
        long last = start;
        do {
            for (int batch : settings.batchSizes()) {
                for (long block : settings.blockSizes()) {
                    long n = warmUpShape(block, batch, rounds == 0 ? share : roundShare, local, remote);
                    if (n < 0) {
                        return false;
                    }
                    transfers += n;
                    long now = System.nanoTime();
                    progress.advance(now - last, "warm-up");
                    last = now;
                }
            }
            rounds++;
        } while (!jit.quietFor(JIT_QUIET_NANOS, System.nanoTime()) && System.nanoTime() - cap < 0);
        LOG.log(System.Logger.Level.DEBUG, "bench warm-up: {0} transfers of {1} row shapes in {2} rounds, {3} ms",
                transfers, shapes, rounds, (System.nanoTime() - start) / 1_000_000);
        return true;
    }

    /**
     * Unmeasured transfers of one shape for {@code nanos} (at least one), then, with a baseline, a
     * quarter as many of its raw transfers (2..1000); the transfers made, or -1 when stopped.
     */
    private long warmUpShape(long block, int batch, long nanos, MemoryDescriptor local, MemoryDescriptor remote)
            throws InterruptedException {
        boolean write = settings.op() == BenchSettings.Op.WRITE;
        MemoryDescriptor[][] d = descriptors(block, batch, local, remote);
        long end = System.nanoTime() + nanos;
        long n = 0;
        do {
            if (stopRequested) {
                return -1;
            }
            transfer(write, d[0], d[1], null, null);
            n++;
        } while (System.nanoTime() - end < 0);
        if (baseline != null) {
            raw(block * batch, 0, (int) Math.max(2, Math.min(1000, n / 4)));
        }
        return n;
    }

    /** A transfer's local and remote descriptors for a row: block i, or batch-1-i when reversed, on both sides. */
    private MemoryDescriptor[][] descriptors(long block, int batch, MemoryDescriptor local, MemoryDescriptor remote) {
        MemoryDescriptor[] localDescs = new MemoryDescriptor[batch];
        MemoryDescriptor[] remoteDescs = new MemoryDescriptor[batch];
        for (int i = 0; i < batch; i++) {
            long at = (settings.reversed() ? batch - 1 - i : i) * block;
            localDescs[i] = local.slice(at, block);
            remoteDescs[i] = remote.slice(at, block);
        }
        return new MemoryDescriptor[][] {localDescs, remoteDescs};
    }

    /** One row, or null when stopped before it ended. */
    private BenchRow row(int index, long block, int batch, MemoryDescriptor local, MemoryDescriptor remote)
            throws InterruptedException {
        boolean write = settings.op() == BenchSettings.Op.WRITE;
        long bytesPerTransfer = block * batch;
        long seed = runId + index;
        if (settings.checkConsistency()) {
            if (write) {
                initiator.fill(local, bytesPerTransfer, seed);
            } else {
                target.fill(seed, bytesPerTransfer);
            }
        }
        MemoryDescriptor[][] d = descriptors(block, batch, local, remote);
        MemoryDescriptor[] localDescs = d[0];
        MemoryDescriptor[] remoteDescs = d[1];
        int warmup = settings.warmupFor(block, batch);
        int iterations = settings.iterationsFor(block, batch);
        String label = ByteSize.format(block) + " x " + batch;
        long weight = progressWeight(block, batch);
        for (int i = 0; i < warmup; i++) {
            if (stopRequested) {
                return null;
            }
            transfer(write, localDescs, remoteDescs, null, null);
            progress.advance(weight, label);
        }
        Histogram latency = new Histogram(3_600_000_000_000L, 3);
        long[] times = new long[3];
        long prep = 0;
        long post = 0;
        byte[] landed = ("tcpx4j-bench " + Long.toHexString(runId) + " row " + index).getBytes(StandardCharsets.UTF_8);
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            if (stopRequested) {
                return null;
            }
            transfer(write, localDescs, remoteDescs, i == iterations - 1 ? landed : null, times);
            prep += times[0];
            post += times[1];
            latency.recordValue(Math.max(1, times[2]));
            progress.advance(weight, label);
        }
        long elapsed = Math.max(1, System.nanoTime() - start);
        lastNotification = landed;
        Long mismatches = null;
        if (settings.checkConsistency()) {
            mismatches = write
                    ? target.verify(seed, bytesPerTransfer, landed)
                    : initiator.verify(local, bytesPerTransfer, seed);
        }
        long bytes = bytesPerTransfer * iterations;
        double seconds = elapsed / 1e9;
        return new BenchRow(block, batch, iterations, bytes, seconds, bytes / seconds / 1e9,
                latency.getMean() / 1e3, latency.getValueAtPercentile(99) / 1e3,
                prep / 1e3 / iterations, post / 1e3 / iterations, mismatches)
                .withMaxLatency(latency.getMaxValue() / 1e3);
    }

    private BenchRow withBaseline(BenchRow r) {
        RawBaseline.Result raw = raw(r.blockSize() * r.batchSize(), settings.warmupFor(r.blockSize(), r.batchSize()),
                r.iterations());
        return r.withRaw(raw.gbps(), raw.avgLatencyUs());
    }

    /** Raw TCP transfers of {@code bytes} over the baseline's sockets; a failure fails the run. */
    private RawBaseline.Result raw(long bytes, int warmup, int iterations) {
        try {
            return baseline.measure(bytes, warmup, iterations);
        } catch (java.io.IOException e) {
            throw new TransferException(TransferException.Code.BACKEND, "the raw TCP baseline failed: " + e.getMessage(), e);
        }
    }

    /**
     * Progress units of one transfer: its bytes plus a fixed cost, so that the bar moves with time
     * both for many small transfers and for few large ones.
     */
    private static long progressWeight(long block, int batch) {
        return block * batch + (64 << 10);
    }

    /** One transfer, waited for. {@code times} (if non-null) receives prep, post and total nanoseconds. */
    private void transfer(boolean write, MemoryDescriptor[] localDescs, MemoryDescriptor[] remoteDescs,
                          byte[] notification, long[] times) throws InterruptedException {
        long t0 = System.nanoTime();
        List<MemoryDescriptor> l = List.of(localDescs);
        List<MemoryDescriptor> r = List.of(remoteDescs);
        Session session = initiator.engine().session(target.name());
        long t1 = System.nanoTime();
        Transfer x = write ? session.write(l, r, notification) : session.read(l, r, notification);
        long t2 = System.nanoTime();
        // a caller-driven engine runs its progress work on this thread meanwhile; otherwise this blocks
        TransferStatus status = initiator.engine().driveUntilEnded(x, TRANSFER_TIMEOUT);
        if (status == TransferStatus.IN_PROGRESS && Thread.interrupted()) {
            x.release();
            throw new InterruptedException();
        }
        long t3 = System.nanoTime();
        if (status != TransferStatus.DONE) {
            if (status == TransferStatus.IN_PROGRESS) {
                x.release();
                throw new TransferException(TransferException.Code.REMOTE_DISCONNECT, "a " + x.bytes()
                        + "-byte transfer did not finish within " + TRANSFER_TIMEOUT.toSeconds() + " s");
            }
            throw x.error().orElseGet(() -> new TransferException(TransferException.Code.UNKNOWN, "transfer " + status));
        }
        if (times != null) {
            times[0] = t1 - t0;
            times[1] = t2 - t1;
            times[2] = t3 - t0;
        }
    }
}
