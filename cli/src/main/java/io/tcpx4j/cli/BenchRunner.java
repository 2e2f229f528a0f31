package io.tcpx4j.cli;

import io.tcpx4j.api.ByteSize;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.cli.layout.Stripes;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * The initiator's measurement loop, the same for embedded and two-host runs. For every batch size and
 * block size (one row) it posts warm-up transfers, then the measured ones: {@code --num-threads}
 * threads, each a {@link Lane} that keeps up to {@code --pipeline-depth} transfers in flight (one
 * thread, one at a time, each waited for before the next, by default: nixlbench with one thread). Every
 * in-flight transfer has a slot of its own: slot s covers blocks {@code [s*batch, (s+1)*batch)} of the
 * row on both sides, which with one buffer per side are bytes {@code [s*B, (s+1)*B)}, B the row's block
 * times batch size, and with a side's buffers on several GPUs go round them ({@link Stripes}), so that
 * {@code --check-consistency} checks every byte of every slot on every GPU. Per transfer it records prep,
 * post, transmission and latency ({@link RowStats}).
 *
 * <p>Bandwidth is the row's bytes over the wall time from the first post to the last completion. The
 * last transfer of every slot in a row carries a notification of its own, so that the target knows
 * when all the row's WRITEs have landed.
 *
 * <p><b>Not thread-safe</b>, except {@link #stop()}.
 */
final class BenchRunner {

    private static final System.Logger LOG = System.getLogger(BenchRunner.class.getName());
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
    private List<byte[]> lastNotifications = List.of();
    private volatile boolean stopRequested;
    /** Set when a thread's transfer failed: the other threads stop posting. */
    private volatile boolean aborted;

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
     * Ends the run after the transfers in progress: the row in progress is dropped, {@link #run()}
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
        for (byte[] region : target.metadata()) {
            initiator.engine().loadRemoteMetadata(target.name(), region);
        }
        Stripes remote = target.buffers();
        Stripes local = initiator.memory().allocate(settings.initiatorDevices(), settings.initiatorBufferBytes());
        ExecutorService pool = settings.threads() > 1 ? Executors.newFixedThreadPool(settings.threads() - 1, r -> {
            Thread t = new Thread(r, "tcpx4j-bench-initiator");
            t.setDaemon(true);
            return t;
        }) : null;
        List<RegisteredMemory> registrations = new ArrayList<>();
        try {
            for (MemoryDescriptor b : local.buffers()) {
                registrations.add(initiator.engine().register(b));
            }
            long total = 0;
            for (int batch : settings.batchSizes()) {
                for (long block : settings.blockSizes()) {
                    total += settings.iterationsFor(block, batch) + settings.warmupFor(block, batch);
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
                    BenchRow r = row(rowIndex++, rowCount, block, batch, local, remote, pool);
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
            target.finish(lastNotifications);
            return rows;
        } finally {
            registrations.forEach(RegisteredMemory::close);
            progress.finish();
            if (pool != null) {
                pool.shutdownNow();
            }
            // nothing is in flight: every transfer was awaited, or the engine failed it
            if (initiator.awaitQuiet(Duration.ofSeconds(10))) {
                initiator.memory().free(local);
            }
        }
    }

    /**
     * Transfers of every row's shape (on the first thread, at the row's pipeline depth), each for an
     * equal share of {@code --warmup-seconds} (at least one), before the first row, each shape followed
     * by a few raw baseline transfers of its size: the JVM compiles the engines' and the baseline's paths
     * after thousands of runs, and a row measured before that reads slower than the same row measured
     * later. Then further rounds over the shapes, each at most {@link #WARMUP_ROUND_NANOS}, until the JIT
     * has finished nothing for {@link #JIT_QUIET_NANOS} ({@link JitQuiet}), the whole warm-up taking at
     * most {@link #WARMUP_CAP} times the seconds asked for and, where {@link BenchSettings#warmupBounded()},
     * at most {@link BenchSettings#WARMUP_PER_MEASURED} transfers per measured transfer of the run. False
     * when stopped meanwhile.
     */
    private boolean warmUp(Stripes local, Stripes remote) throws InterruptedException {
        if (settings.warmupSeconds() <= 0) {
            return true;
        }
        int shapes = settings.batchSizes().size() * settings.blockSizes().size();
        long asked = (long) (settings.warmupSeconds() * 1e9);
        long share = asked / shapes;
        long roundShare = Math.min(share, WARMUP_ROUND_NANOS / shapes);
        long budget = settings.warmupBounded()
                ? Math.max(shapes, BenchSettings.WARMUP_PER_MEASURED * settings.measuredTransfers()) : Long.MAX_VALUE;
        long perShape = Math.max(1, budget / shapes);
        JitQuiet jit = JitQuiet.ofThisJvm();
        long start = System.nanoTime();
        long cap = start + WARMUP_CAP * asked;
        long transfers = 0;
        int rounds = 0;
        progress.phase("warm-up");
        do {
            for (int batch : settings.batchSizes()) {
                for (long block : settings.blockSizes()) {
                    long n = warmUpShape(block, batch, rounds == 0 ? share : roundShare,
                            Math.min(perShape, Math.max(1, budget - transfers)), local, remote);
                    if (n < 0) {
                        return false;
                    }
                    transfers += n;
                }
            }
            rounds++;
        } while (transfers < budget && !jit.quietFor(JIT_QUIET_NANOS, System.nanoTime())
                && System.nanoTime() - cap < 0);
        LOG.log(System.Logger.Level.DEBUG, "bench warm-up: {0} transfers of {1} row shapes in {2} rounds, {3} ms",
                transfers, shapes, rounds, (System.nanoTime() - start) / 1_000_000);
        return true;
    }

    /**
     * Unmeasured transfers of one shape for {@code nanos} but at most {@code max} (at least one), then,
     * with a baseline, a quarter as many of its raw transfers (2..1000); the transfers made, or -1 when
     * stopped.
     */
    private long warmUpShape(long block, int batch, long nanos, long max, Stripes local, Stripes remote)
            throws InterruptedException {
        Lane lane = lane(0, block, batch, local, remote, progress);
        long n = lane.run(max, System.nanoTime() + nanos, null, null);
        if (n < 0) {
            return -1;
        }
        if (baseline != null) {
            raw(block * batch, 0, (int) Math.max(2, Math.min(1000, n / 4)));
        }
        return n;
    }

    /**
     * Thread {@code thread}'s lane for a row: its slots' descriptors, block i or batch-1-i of each slot, on
     * each side where that side lays the block out.
     */
    @SuppressWarnings("unchecked")
    private Lane lane(int thread, long block, int batch, Stripes local, Stripes remote, Progress progress) {
        int depth = settings.depth();
        List<MemoryDescriptor>[] l = new List[depth];
        List<MemoryDescriptor>[] r = new List[depth];
        for (int k = 0; k < depth; k++) {
            long slot = (long) (thread * depth + k) * batch;
            MemoryDescriptor[] ld = new MemoryDescriptor[batch];
            MemoryDescriptor[] rd = new MemoryDescriptor[batch];
            for (int i = 0; i < batch; i++) {
                long b = slot + (settings.reversed() ? batch - 1 - i : i);
                ld[i] = local.block(b, block);
                rd[i] = remote.block(b, block);
            }
            l[k] = List.of(ld);
            r[k] = List.of(rd);
        }
        return new Lane(initiator.engine(), target.name(), settings.op() == BenchSettings.Op.WRITE, l, r,
                () -> stopRequested || aborted, progress);
    }

    /** One row, or null when stopped before it ended. */
    private BenchRow row(int index, int rowCount, long block, int batch, Stripes local, Stripes remote,
                         ExecutorService pool) throws InterruptedException {
        boolean write = settings.op() == BenchSettings.Op.WRITE;
        long bytesPerTransfer = block * batch;
        long blocks = (long) batch * settings.slots();
        long seed = runId + index;
        if (settings.checkConsistency()) {
            if (write) {
                initiator.memory().fill(local, 0, blocks, block, seed);
            } else {
                target.fill(seed, block, blocks);
            }
        }
        int threads = settings.threads();
        int depth = settings.depth();
        int warmup = settings.warmupFor(block, batch);
        int iterations = settings.iterationsFor(block, batch);
        progress.phase("row " + (index + 1) + " of " + rowCount + ": " + ByteSize.format(block) + " x " + batch);
        Lane[] lanes = new Lane[threads];
        RowStats[] stats = new RowStats[threads];
        byte[][][] notes = new byte[threads][depth][];
        List<byte[]> landed = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            lanes[t] = lane(t, block, batch, local, remote, progress);
            stats[t] = new RowStats();
            for (int k = 0; k < Math.min(depth, settings.shareOf(iterations, t)); k++) {
                notes[t][k] = ("tcpx4j-bench " + Long.toHexString(runId) + " row " + index + " slot "
                        + (t * depth + k)).getBytes(StandardCharsets.UTF_8);
                landed.add(notes[t][k]);
            }
        }
        if (!inParallel(pool, t -> lanes[t].run(settings.shareOf(warmup, t), 0, null, null))) {
            return null;
        }
        long start = System.nanoTime();
        if (!inParallel(pool, t -> lanes[t].run(settings.shareOf(iterations, t), 0, stats[t], notes[t]))) {
            return null;
        }
        long elapsed = System.nanoTime() - start;
        lastNotifications = landed;
        for (int t = 1; t < threads; t++) {
            stats[0].add(stats[t]);
        }
        BenchRow row = stats[0].toRow(block, batch, bytesPerTransfer * iterations, elapsed);
        if (settings.checkConsistency()) {
            row = row.withChecked(write
                    ? target.verify(seed, block, blocks, landed)
                    : initiator.memory().verify(local, 0, blocks, block, seed));
        }
        return row;
    }

    /** One thread's part of a phase: the transfers it made, or -1 when stopped. */
    private interface LaneJob {
        long run(int thread) throws InterruptedException;
    }

    /**
     * Runs {@code job} for every thread, the first on this one, and waits for all; false when any was
     * stopped. The first failure is thrown once every thread has ended (a failure stops the others).
     */
    private boolean inParallel(ExecutorService pool, LaneJob job) throws InterruptedException {
        List<Future<Long>> others = new ArrayList<>();
        for (int t = 1; t < settings.threads(); t++) {
            int thread = t;
            others.add(pool.submit(() -> job.run(thread)));
        }
        Throwable failure = null;
        boolean stopped = false;
        try {
            stopped = job.run(0) < 0;
        } catch (RuntimeException | InterruptedException e) {
            aborted = true;
            failure = e;
        }
        for (Future<Long> f : others) {
            try {
                stopped |= f.get() < 0;
            } catch (ExecutionException e) {
                aborted = true;
                if (failure == null) {
                    failure = e.getCause();
                }
            }
        }
        if (failure instanceof InterruptedException ie) {
            throw ie;
        }
        if (failure instanceof RuntimeException re) {
            throw re;
        }
        if (failure instanceof Error err) {
            throw err;
        }
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
        return !stopped;
    }

    private BenchRow withBaseline(BenchRow r) {
        RawBaseline.Result raw = raw(r.blockSize() * r.batchSize(), settings.warmupFor(r.blockSize(), r.batchSize()),
                r.iterations());
        return r.withRaw(raw);
    }

    /** Raw TCP transfers of {@code bytes} over the baseline's sockets; a failure fails the run. */
    private RawBaseline.Result raw(long bytes, int warmup, int iterations) {
        try {
            return baseline.measure(bytes, warmup, iterations);
        } catch (java.io.IOException e) {
            throw new TransferException(TransferException.Code.BACKEND, "the raw TCP baseline failed: " + e.getMessage(), e);
        }
    }
}
