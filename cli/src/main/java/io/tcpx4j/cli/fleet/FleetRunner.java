package io.tcpx4j.cli.fleet;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.cli.layout.Stripes;
import io.tcpx4j.domain.protocol.RegionMetadata;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.zip.DataFormatException;

/**
 * One worker's part of a fleet run: publishes its engine and buffers, loads its peers', then for each
 * row of the plan (between a start and an end barrier of all workers) either initiates transfers to
 * its targets or serves its initiators, and reports the row over all workers.
 *
 * <p>An initiator's iteration posts one transfer to each of its targets, then waits for all of them;
 * its last measured iteration carries a notification per target, which tells the target that the
 * row's data is in place. With {@code --check-consistency} each (initiator, target) pair uses a pattern
 * of its own in a slot of its own on both sides, and the side that received checks every byte: the
 * target after a WRITE row, the initiator after a READ row.
 *
 * <p>A worker's memory is one buffer, or one per GPU its role spreads over; slot s of a row of batch size
 * n covers blocks {@code [s x n, (s + 1) x n)} of the row, laid out as {@link Stripes} on each side (the
 * initiator learns the target's buffers, and so its GPUs, from their published metadata).
 *
 * <p><b>Not thread-safe</b>: one worker thread runs it.
 */
final class FleetRunner {

    /** A single transfer that takes longer than this fails the run. */
    static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long HIGHEST_NANOS = 3_600_000_000_000L;

    /** What each worker publishes when it joins: its buffers' metadata in block order. */
    record Info(String name, byte[] connInfo, List<byte[]> metadata, String fingerprint, long seed) {
    }

    /**
     * What each worker publishes at the end of a row (targets: the check only); {@code checked} is the bytes
     * the worker checked per GPU.
     */
    record Result(long bytes, int iterations, long elapsedNanos, byte[] latency, byte[] prep, byte[] post, byte[] tx,
                  Long mismatches, Map<Integer, Long> checked) {
    }

    private final FleetGroup group;
    private final Scheme scheme;
    private final FleetPlan plan;
    private final FleetNode node;
    private final TransferEngine engine;
    private final Duration joinWait;
    private final Duration barrierWait;
    private final BooleanSupplier stop;
    private final Consumer<FleetRow> onRow;
    private final int me;
    private final int workers;
    private final List<Integer> targets;
    private final List<Integer> initiators;
    private final Map<Integer, Info> infos = new HashMap<>();
    private long runSeed;

    FleetRunner(FleetGroup group, Scheme scheme, FleetPlan plan, FleetNode node, Duration joinWait,
                Duration barrierWait, BooleanSupplier stop, Consumer<FleetRow> onRow) {
        this.group = group;
        this.scheme = scheme;
        this.plan = plan;
        this.node = node;
        this.engine = node.engine();
        this.joinWait = joinWait;
        this.barrierWait = barrierWait;
        this.stop = stop;
        this.onRow = onRow;
        this.me = group.rank();
        this.workers = group.workers();
        this.targets = scheme.targetsOf(me, workers);
        this.initiators = scheme.initiatorsOf(me, workers);
    }

    /** Runs every row (or those before {@code stop} turned true) and returns them. */
    List<FleetRow> run() throws IOException, InterruptedException {
        int gpus = Math.max(1, node.devices().size());
        Stripes buffers = node.allocate(plan.bytesPerBuffer(scheme.slots(me, workers), gpus));
        boolean quiet = false;
        List<RegisteredMemory> registrations = new ArrayList<>();
        try {
            for (MemoryDescriptor b : buffers.buffers()) {
                registrations.add(engine.register(b));
            }
            join(registrations);
            List<FleetRow> rows = new ArrayList<>();
            for (int k = 0; k < plan.rows().size() && !stop.getAsBoolean(); k++) {
                FleetRow r = row(k, plan.rows().get(k), buffers);
                if (r == null) {
                    break;
                }
                rows.add(r);
                onRow.accept(r);
            }
            if (rows.size() == plan.rows().size()) {
                // the results of the last row are read everywhere before anyone's keys go with its lease
                group.exchange("end", new byte[0], "the workers to finish", barrierWait);
            }
            quiet = node.awaitQuiet(Duration.ofSeconds(10));
            return rows;
        } finally {
            registrations.forEach(RegisteredMemory::close);
            // a buffer a transfer may still touch is leaked rather than freed under it
            if (quiet || registrations.size() < buffers.count()) {
                node.free(buffers);
            }
        }
    }

    /** Publishes this worker, waits for all, checks they run the same plan, and loads the peers. */
    private void join(List<RegisteredMemory> registrations) throws IOException, InterruptedException {
        String fingerprint = plan.fingerprint(scheme, workers);
        Info mine = new Info(engine.name(), engine.connInfo(),
                registrations.stream().map(RegisteredMemory::publicMetadata).toList(), fingerprint,
                ThreadLocalRandom.current().nextLong());
        Map<Integer, byte[]> all = group.exchange("info", JSON.writeValueAsBytes(mine),
                "all " + workers + " workers to join", joinWait);
        for (Map.Entry<Integer, byte[]> e : all.entrySet()) {
            Info info = JSON.readValue(e.getValue(), Info.class);
            if (!fingerprint.equals(info.fingerprint())) {
                throw new FleetException("worker rank " + e.getKey() + " runs other settings than rank " + me
                        + ": it runs " + info.fingerprint() + "; this worker runs " + fingerprint);
            }
            infos.put(e.getKey(), info);
        }
        runSeed = infos.get(0).seed();
        for (int t : targets) {
            Info info = infos.get(t);
            engine.loadPeer(info.name(), info.connInfo());
            for (byte[] region : info.metadata()) {
                engine.loadRemoteMetadata(info.name(), region);
            }
        }
        for (int i : initiators) {
            Info info = infos.get(i);
            engine.loadPeer(info.name(), info.connInfo());
        }
    }

    /** One row on this worker, then its report over all workers; null when stopped before it ended here. */
    private FleetRow row(int k, FleetPlan.Row row, Stripes buffers) throws IOException, InterruptedException {
        String what = "row " + (k + 1) + " (" + row.blockSize() + " x " + row.batchSize() + ")";
        if (plan.checkConsistency()) {
            if (plan.write()) {
                for (int t : targets) {
                    node.fill(buffers, first(me, t, me, row), row.batchSize(), row.blockSize(), seed(k, me, t));
                }
            } else {
                for (int i : initiators) {
                    node.fill(buffers, first(i, me, me, row), row.batchSize(), row.blockSize(), seed(k, i, me));
                }
            }
        }
        group.exchange("row-" + k + "-start", new byte[0], what + " to start", barrierWait);
        Result mine = targets.isEmpty() ? serve(k, row, buffers) : initiate(k, row, buffers);
        if (mine == null) {
            return null;
        }
        Map<Integer, byte[]> all = group.exchange("row-" + k, JSON.writeValueAsBytes(mine), what + " to end",
                barrierWait);
        return report(row, all);
    }

    /** The initiator's row: warm-up, then measured iterations; its result, or null when stopped meanwhile. */
    private Result initiate(int k, FleetPlan.Row row, Stripes buffers) throws InterruptedException {
        int n = targets.size();
        String[] peers = new String[n];
        List<List<MemoryDescriptor>> local = new ArrayList<>();
        List<List<MemoryDescriptor>> remote = new ArrayList<>();
        byte[][] landed = new byte[n][];
        for (int j = 0; j < n; j++) {
            int t = targets.get(j);
            peers[j] = infos.get(t).name();
            Stripes theirs = new Stripes(infos.get(t).metadata().stream()
                    .map(m -> RegionMetadata.decode(m).region()).toList());
            local.add(descriptors(buffers, first(me, t, me, row), row));
            remote.add(descriptors(theirs, first(me, t, t, row), row));
            landed[j] = landed(k, me, t);
        }
        Transfer[] inFlight = new Transfer[n];
        for (int w = 0; w < row.warmup(); w++) {
            if (stop.getAsBoolean()) {
                return null;
            }
            iteration(peers, local, remote, null, inFlight, null);
        }
        Histogram latency = new Histogram(HIGHEST_NANOS, 3);
        Histogram prep = new Histogram(HIGHEST_NANOS, 3);
        Histogram post = new Histogram(HIGHEST_NANOS, 3);
        Histogram tx = new Histogram(HIGHEST_NANOS, 3);
        long[] times = new long[2];
        long start = System.nanoTime();
        for (int i = 0; i < row.iterations(); i++) {
            if (stop.getAsBoolean()) {
                return null;
            }
            long t0 = System.nanoTime();
            iteration(peers, local, remote, i == row.iterations() - 1 ? landed : null, inFlight, times);
            long total = Math.max(1, Math.min(HIGHEST_NANOS, System.nanoTime() - t0));
            latency.recordValue(total);
            prep.recordValue(Math.min(HIGHEST_NANOS, times[0]));
            post.recordValue(Math.min(HIGHEST_NANOS, times[1]));
            tx.recordValue(Math.max(0, total - times[0] - times[1]));
        }
        long elapsed = Math.max(1, System.nanoTime() - start);
        Long mismatches = null;
        Map<Integer, Long> checked = new TreeMap<>();
        if (plan.checkConsistency() && !plan.write()) {
            long bad = 0;
            for (int t : targets) {
                bad += node.verify(buffers, first(me, t, me, row), row.batchSize(), row.blockSize(), seed(k, me, t),
                        checked);
            }
            mismatches = bad;
        }
        long bytes = row.blockSize() * row.batchSize() * n * (long) row.iterations();
        return new Result(bytes, row.iterations(), elapsed, encode(latency), encode(prep), encode(post), encode(tx),
                mismatches, checked);
    }

    /**
     * One iteration: a transfer to every target, then waits for all. {@code times} (if non-null)
     * receives the nanoseconds spent preparing and posting.
     */
    private void iteration(String[] peers, List<List<MemoryDescriptor>> local, List<List<MemoryDescriptor>> remote,
                           byte[][] notifications, Transfer[] inFlight, long[] times) throws InterruptedException {
        long prep = 0;
        long post = 0;
        for (int j = 0; j < peers.length; j++) {
            long t0 = System.nanoTime();
            Session session = engine.session(peers[j]);
            long t1 = System.nanoTime();
            byte[] note = notifications == null ? null : notifications[j];
            inFlight[j] = plan.write() ? session.write(local.get(j), remote.get(j), note)
                    : session.read(local.get(j), remote.get(j), note);
            long t2 = System.nanoTime();
            prep += t1 - t0;
            post += t2 - t1;
        }
        for (int j = 0; j < peers.length; j++) {
            Transfer x = inFlight[j];
            inFlight[j] = null;
            TransferStatus status = engine.driveUntilEnded(x, TRANSFER_TIMEOUT);
            if (status == TransferStatus.IN_PROGRESS && Thread.interrupted()) {
                x.release();
                throw new InterruptedException();
            }
            if (status != TransferStatus.DONE) {
                if (status == TransferStatus.IN_PROGRESS) {
                    x.release();
                    throw new TransferException(TransferException.Code.REMOTE_DISCONNECT, "a " + x.bytes()
                            + "-byte transfer to " + peers[j] + " did not finish within "
                            + TRANSFER_TIMEOUT.toSeconds() + " s");
                }
                String peer = peers[j];
                throw x.error().orElseGet(() -> new TransferException(TransferException.Code.UNKNOWN,
                        "transfer to " + peer + " " + status));
            }
        }
        if (times != null) {
            times[0] = prep;
            times[1] = post;
        }
    }

    /**
     * The target's row: waits for each initiator's last notification of the row (in slices, asking
     * etcd in between whether the run broke elsewhere), then, after a checked WRITE, checks each
     * initiator's slot. Null when stopped meanwhile.
     */
    private Result serve(int k, FleetPlan.Row row, Stripes buffers) throws IOException {
        long deadline = System.nanoTime() + barrierWait.toNanos();
        for (int i : initiators) {
            byte[] note = landed(k, i, me);
            while (!node.awaitNotification(note, Duration.ofSeconds(1))) {
                if (stop.getAsBoolean()) {
                    return null;
                }
                String elsewhere = group.causeElsewhere();
                if (elsewhere != null) {
                    throw new FleetException(elsewhere);
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new FleetException("the last transfer of row " + (k + 1) + " from worker rank " + i
                            + " did not land within " + barrierWait.toSeconds() + " s");
                }
            }
        }
        Long mismatches = null;
        Map<Integer, Long> checked = new TreeMap<>();
        if (plan.checkConsistency() && plan.write()) {
            long bad = 0;
            for (int i : initiators) {
                bad += node.verify(buffers, first(i, me, me, row), row.batchSize(), row.blockSize(), seed(k, i, me),
                        checked);
            }
            mismatches = bad;
        }
        return new Result(0, 0, 0, null, null, null, null, mismatches, checked);
    }

    /** The row over all workers, from every worker's result. */
    private FleetRow report(FleetPlan.Row row, Map<Integer, byte[]> all) throws IOException {
        Histogram latency = new Histogram(HIGHEST_NANOS, 3);
        Histogram prep = new Histogram(HIGHEST_NANOS, 3);
        Histogram post = new Histogram(HIGHEST_NANOS, 3);
        Histogram tx = new Histogram(HIGHEST_NANOS, 3);
        long bytes = 0;
        long longest = 0;
        long mismatches = 0;
        Map<Integer, Long> checked = new TreeMap<>();
        for (Map.Entry<Integer, byte[]> e : all.entrySet()) {
            Result r = JSON.readValue(e.getValue(), Result.class);
            bytes += r.bytes();
            longest = Math.max(longest, r.elapsedNanos());
            if (r.latency() != null) {
                latency.add(decode(r.latency(), e.getKey()));
                prep.add(decode(r.prep(), e.getKey()));
                post.add(decode(r.post(), e.getKey()));
                tx.add(decode(r.tx(), e.getKey()));
            }
            if (r.mismatches() != null) {
                mismatches += r.mismatches();
            }
            if (r.checked() != null) {
                r.checked().forEach((gpu, n) -> checked.merge(gpu, n, Long::sum));
            }
        }
        return new FleetRow(row.blockSize(), row.batchSize(), row.iterations(), bytes, longest / 1e9, latency, prep,
                post, tx, plan.checkConsistency() ? mismatches : null,
                plan.checkConsistency() && !checked.isEmpty() ? checked : null);
    }

    /**
     * The first block of the slot that worker {@code side} uses for the pair (initiator, target) in a row.
     */
    private long first(int initiator, int target, int side, FleetPlan.Row row) {
        return (long) scheme.slot(side, initiator, target, workers) * row.batchSize();
    }

    /** A transfer's descriptors from block {@code first} of {@code buffers}: block i, or batch-1-i when reversed. */
    private List<MemoryDescriptor> descriptors(Stripes buffers, long first, FleetPlan.Row row) {
        MemoryDescriptor[] d = new MemoryDescriptor[row.batchSize()];
        for (int i = 0; i < d.length; i++) {
            d[i] = buffers.block(first + (plan.reversed() ? d.length - 1 - i : i), row.blockSize());
        }
        return List.of(d);
    }

    /** The pattern of row {@code k} for the pair (initiator, target): the same on every worker. */
    private long seed(int k, int initiator, int target) {
        return runSeed + ((long) k << 40) + ((long) initiator << 20) + target;
    }

    /** The notification on the last measured transfer of row {@code k} from initiator to target. */
    private byte[] landed(int k, int initiator, int target) {
        return ("tcpx4j-fleet " + Long.toHexString(runSeed) + " row " + k + " " + initiator + "->" + target)
                .getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] encode(Histogram h) {
        ByteBuffer b = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(b);
        return Arrays.copyOf(b.array(), n);
    }

    private static Histogram decode(byte[] bytes, int rank) throws FleetException {
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(bytes), 0);
        } catch (DataFormatException | RuntimeException e) {
            throw new FleetException("worker rank " + rank + " published latencies that cannot be read", e);
        }
    }
}
