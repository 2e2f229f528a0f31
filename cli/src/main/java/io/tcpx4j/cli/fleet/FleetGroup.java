package io.tcpx4j.cli.fleet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * One worker's membership of a benchmark group in etcd: its rank, what it publishes for the others,
 * and the barriers of the run. Keys live under {@code tcpx4j/bench/GROUP/}:
 * <ul>
 *   <li>{@code rank/R}: claimed by one worker (created only if absent), its id as value;</li>
 *   <li>{@code STAGE/R}: what rank R publishes at a stage (its engine details, a row's results), which
 *       is also its arrival at that stage's barrier;</li>
 *   <li>{@code failed/ID} and {@code left/ID}: a worker that failed (with why) or ended its run.</li>
 * </ul>
 * Everything a worker writes is attached to its lease ({@link #LEASE_TTL_SECONDS}, renewed every
 * second by a thread of its own), so that a worker that vanishes takes its keys with it within the
 * TTL and a later run of the same group starts clean; {@code failed/} and {@code left/} outlive it on a
 * lease of {@link #NOTICE_TTL_SECONDS} that nobody renews, and are read only for the ids of this run's
 * members.
 *
 * <p>A wait at a barrier ends when every rank has arrived, and fails at once when a member failed or
 * its rank key disappeared (the process ended or its lease expired), or after its timeout: no worker
 * waits for one that is gone.
 *
 * <p><b>Not thread-safe</b>: one worker thread calls it (the lease thread is internal).
 */
public final class FleetGroup implements AutoCloseable {

    /** Seconds a vanished worker's keys outlive it. */
    static final long LEASE_TTL_SECONDS = 5;
    /** Seconds the failed/left notices of a run stay readable for the workers still waiting. */
    static final long NOTICE_TTL_SECONDS = 60;
    private static final long MAX_POLL_NANOS = 50_000_000L;

    private final EtcdClient etcd;
    private final String group;
    private final String prefix;
    private final int workers;
    private final String id;
    private final long lease;
    private final int rank;
    /** The store revision at which this worker took its rank: later notices are from this run. */
    private final long joinRevision;
    private final ScheduledExecutorService renewer;
    /** Rank to id of every member seen so far. */
    private final Map<Integer, String> members = new ConcurrentHashMap<>();
    private volatile String leaseLost;
    private volatile long lastRenewal = System.nanoTime();
    private boolean closed;

    private FleetGroup(EtcdClient etcd, String group, int workers, String id, long lease, int rank,
                       long joinRevision) {
        this.etcd = etcd;
        this.group = group;
        this.prefix = keyPrefix(group);
        this.workers = workers;
        this.id = id;
        this.lease = lease;
        this.rank = rank;
        this.joinRevision = joinRevision;
        this.members.put(rank, id);
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tcpx4j-etcd-lease");
            t.setDaemon(true);
            return t;
        });
        renewer.scheduleWithFixedDelay(this::renew, 1, 1, TimeUnit.SECONDS);
    }

    /** Where a group's keys live. */
    static String keyPrefix(String group) {
        return "tcpx4j/bench/" + group + "/";
    }

    /**
     * Joins {@code group} with the lowest free rank below {@code workers}.
     *
     * @throws IOException when etcd cannot be reached, or every rank is taken
     */
    public static FleetGroup join(EtcdClient etcd, String group, int workers) throws IOException {
        long lease = etcd.grant(LEASE_TTL_SECONDS);
        String id = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
        String prefix = keyPrefix(group);
        try {
            for (int r = 0; r < workers; r++) {
                String key = prefix + "rank/" + r;
                if (etcd.putIfAbsent(key, id.getBytes(StandardCharsets.UTF_8), lease)) {
                    long revision = etcd.get(key).map(EtcdClient.KeyValue::createRevision).orElse(Long.MAX_VALUE);
                    return new FleetGroup(etcd, group, workers, id, lease, r, revision);
                }
            }
        } catch (IOException | RuntimeException e) {
            revokeQuietly(etcd, lease);
            throw e;
        }
        revokeQuietly(etcd, lease);
        throw new IOException("benchmark group '" + group + "' at etcd " + etcd.endpoints().get(0) + " has all "
                + workers + " ranks taken (another run of the group is in progress, or ended less than "
                + LEASE_TTL_SECONDS + " s ago): use another --benchmark-group");
    }

    public int rank() {
        return rank;
    }

    public int workers() {
        return workers;
    }

    public String group() {
        return group;
    }

    /**
     * Publishes {@code value} as this worker's part of {@code stage} (its arrival there), then waits
     * until every rank has published its part; every rank's value by rank.
     *
     * @param what    what is waited for, for errors ("the workers to join", "row 3")
     * @param timeout longest wait
     * @throws FleetException when a member failed or vanished, this worker lost its lease, or the time ran out
     */
    public Map<Integer, byte[]> exchange(String stage, byte[] value, String what, Duration timeout)
            throws IOException, InterruptedException {
        checkLease();
        etcd.put(prefix + stage + "/" + rank, value, lease);
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = 1_000_000L;
        while (true) {
            Map<Integer, byte[]> arrived = new TreeMap<>();
            for (EtcdClient.KeyValue kv : etcd.range(prefix + stage + "/")) {
                Integer r = rankOf(kv.key(), stage);
                if (r != null) {
                    arrived.put(r, kv.value());
                }
            }
            if (arrived.size() >= workers) {
                if (members.size() < workers) {
                    ranks(); // the ids of this run's members, to tell later whether one vanished
                }
                return arrived;
            }
            List<Integer> missing = missing(arrived, what);
            if (missing.isEmpty()) {
                return arrived; // the missing ones ended the run normally after arriving
            }
            checkLease();
            if (System.nanoTime() - deadline > 0) {
                throw new FleetException("waited " + timeout.toSeconds() + " s for " + what + ": "
                        + describe(missing) + (missing.size() == 1 ? " has" : " have") + " not arrived");
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            LockSupport.parkNanos(pause);
            pause = Math.min(MAX_POLL_NANOS, pause * 2);
        }
    }

    /**
     * The ranks not in {@code arrived} that may still come; fails when a member failed or vanished.
     * A member that ended its run normally ({@code left/}) counts as arrived.
     */
    private List<Integer> missing(Map<Integer, byte[]> arrived, String what) throws IOException {
        Map<Integer, String> present = ranks();
        Set<String> left = notices("left/");
        String gone = vanished(present, left, " before " + what);
        if (gone != null) {
            throw new FleetException(gone);
        }
        String failure = failure();
        if (failure != null) {
            throw new FleetException(failure);
        }
        List<Integer> missing = new ArrayList<>();
        for (int r = 0; r < workers; r++) {
            String member = members.get(r);
            if (!arrived.containsKey(r) && (member == null || !left.contains(member))) {
                missing.add(r);
            }
        }
        return missing;
    }

    /**
     * The first member that is gone from etcd without a word (no failed or {@code left} notice):
     * "worker rank R left ..."; null if none. It explains more than the notices of the members that
     * failed because of it.
     */
    private String vanished(Map<Integer, String> present, Set<String> left, String when) throws IOException {
        Set<String> noticed = new HashSet<>(left);
        noticed.addAll(notices("failed/"));
        for (Map.Entry<Integer, String> m : new TreeMap<>(members).entrySet()) {
            if (!m.getValue().equals(present.get(m.getKey())) && !noticed.contains(m.getValue())) {
                return "worker rank " + m.getKey() + " left benchmark group '" + group + "'" + when
                        + " (its process ended, or etcd did not hear from it for " + LEASE_TTL_SECONDS + " s)";
            }
        }
        return null;
    }

    /** The ids of the workers with a notice of {@code kind} ("failed/", "left/"). */
    private Set<String> notices(String kind) throws IOException {
        Set<String> ids = new HashSet<>();
        for (EtcdClient.KeyValue kv : etcd.range(prefix + kind)) {
            ids.add(kv.key().substring((prefix + kind).length()));
        }
        return ids;
    }

    /**
     * The rank keys in etcd now, rank to id; a rank claimed for the first time becomes a member. A
     * member whose rank key is gone, or holds another id, has left.
     */
    private Map<Integer, String> ranks() throws IOException {
        Map<Integer, String> present = new TreeMap<>();
        for (EtcdClient.KeyValue kv : etcd.range(prefix + "rank/")) {
            Integer r = rankOf(kv.key(), "rank");
            if (r != null) {
                present.put(r, kv.text());
                members.putIfAbsent(r, kv.text());
            }
        }
        return present;
    }

    /**
     * The first failure a member of this run reported, as "worker rank R failed: why"; null if none.
     * A notice is of this run when it comes from a member seen here, or was written after this worker
     * joined (a member may fail before the others saw it): notices of earlier runs of the group are older.
     */
    public String failure() throws IOException {
        EtcdClient.KeyValue first = null;
        for (EtcdClient.KeyValue kv : etcd.range(prefix + "failed/")) {
            String who = kv.key().substring((prefix + "failed/").length());
            if (!who.equals(id) && (members.containsValue(who) || kv.createRevision() > joinRevision)
                    && (first == null || kv.createRevision() < first.createRevision())) {
                first = kv;
            }
        }
        return first == null ? null : first.text();
    }

    /**
     * {@link #causeElsewhere()}, asked again until etcd knows or {@code within} has passed: a peer
     * whose process died breaks this worker's transfers at once, and etcd learns of it only when its
     * lease expires ({@link #LEASE_TTL_SECONDS}).
     */
    public String causeElsewhere(Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            String cause = causeElsewhere();
            if (cause != null || System.nanoTime() - deadline > 0 || Thread.currentThread().isInterrupted()) {
                return cause;
            }
            LockSupport.parkNanos(200_000_000L);
        }
    }

    /**
     * Why the run broke elsewhere, for a local error that may be its consequence: a member's
     * failure, or a member that vanished; null if etcd knows of neither (or cannot be asked).
     */
    public String causeElsewhere() {
        try {
            String gone = vanished(ranks(), notices("left/"), "");
            return gone != null ? gone : failure();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Tells the other members that this worker failed and why, then leaves the group. Best effort:
     * when etcd cannot be reached the others learn it from this worker's lease expiring.
     */
    public void fail(String why) {
        notice("failed/", ("worker rank " + rank + " failed: " + why).getBytes(StandardCharsets.UTF_8));
        close();
    }

    /** Ends this worker's part of a run that went well: the others count it as arrived from now on. */
    public void leave() {
        notice("left/", new byte[0]);
        close();
    }

    private void notice(String kind, byte[] value) {
        if (closed) {
            return;
        }
        try {
            long noticeLease = etcd.grant(NOTICE_TTL_SECONDS);
            etcd.put(prefix + kind + id, value, noticeLease);
        } catch (IOException e) {
            // the others see the lease expire instead
        }
    }

    /** Stops renewing and revokes the lease, deleting this worker's keys. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        renewer.shutdownNow();
        revokeQuietly(etcd, lease);
    }

    private void renew() {
        try {
            if (!etcd.keepAlive(lease)) {
                leaseLost = "etcd let this worker's lease expire";
                return;
            }
            lastRenewal = System.nanoTime();
        } catch (IOException e) {
            if (System.nanoTime() - lastRenewal > TimeUnit.SECONDS.toNanos(LEASE_TTL_SECONDS)) {
                leaseLost = "this worker could not renew its etcd lease for " + LEASE_TTL_SECONDS + " s ("
                        + e.getMessage() + ")";
            }
        }
    }

    private void checkLease() throws FleetException {
        String lost = leaseLost;
        if (lost != null) {
            throw new FleetException(lost + ": the other workers count it as gone");
        }
    }

    private String describe(List<Integer> ranks) {
        return (ranks.size() == 1 ? "rank " : "ranks ")
                + ranks.stream().map(String::valueOf).collect(Collectors.joining(", "))
                + " of benchmark group '" + group + "'";
    }

    private Integer rankOf(String key, String stage) {
        String head = prefix + stage + "/";
        if (!key.startsWith(head)) {
            return null;
        }
        try {
            int r = Integer.parseInt(key.substring(head.length()));
            return r >= 0 && r < workers ? r : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static void revokeQuietly(EtcdClient etcd, long lease) {
        try {
            etcd.revoke(lease);
        } catch (IOException e) {
            // the lease expires on its own
        }
    }
}
