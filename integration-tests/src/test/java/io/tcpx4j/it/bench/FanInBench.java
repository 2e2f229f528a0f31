package io.tcpx4j.it.bench;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.Progress;
import io.tcpx4j.it.transfer.Bytes;
import io.tcpx4j.it.transfer.LoopbackNode;
import io.tcpx4j.transport.loopback.LoopbackConfig;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Fan-in, the decode side of disaggregated serving: K initiator engines WRITE blocks into one target
 * engine at the same time, each into its own slice of one registered region, one transfer in flight
 * per initiator, each with a notification. All engines in this JVM over the loopback transport, each
 * with its own transport and progress thread.
 *
 * <p>Per K: aggregate GB/s (every measured byte over the wall time from the common start to the last
 * DONE) and p50/p99 of the per-transfer latency ({@code write()} to DONE); then the same shape over raw
 * TCP in the same run ({@link #raw}): K sockets into one receiver whose reader threads (as many as the
 * target's I/O threads) each serve a share of them with a selector, one block in flight per socket,
 * acknowledged by one byte once it has all arrived: the ceiling of this host's loopback TCP, and the
 * spread of its per-block latency (write to acknowledgement) on the same threads and sockets. After each K every slice is
 * compared with its initiator's source and the target must hold exactly one notification per
 * transfer (warm-up included), each from the right initiator; any difference ends the run.
 *
 * <pre>{@code
 * ./mvnw -B -q test-compile dependency:build-classpath -pl integration-tests -am \
 *     -Dmdep.outputFile=/tmp/it-cp.txt -Dmdep.includeScope=test
 * java -cp integration-tests/target/test-classes:$(cat /tmp/it-cp.txt) io.tcpx4j.it.bench.FanInBench \
 *     [K,K,...] [block bytes] [transfers per initiator] [warm-up per initiator] [target I/O threads] [devmem on|off]
 *     [initiator I/O threads] [spin of every engine's driver before it blocks, in ns]
 * }</pre>
 * Defaults: K = 1,8,32,64, 1 MiB blocks, 40 transfers and 5 warm-up per initiator, the loopback
 * transport's default I/O threads on the target and on each initiator, devmem off (host
 * receives land in place, as on TCPX and as the CLI and the NIXL backend run the loopback transport;
 * on: every receive lands in 4 KiB bounce pages that the target's progress thread unpacks with CPU
 * copies, TCPX's GPU receive path simulated in host memory). {@code -Dbench.agents=N} gives the target N
 * progress agents (default 1), each serving the initiators whose names hash to it; {@code -Dbench.target-cpus}
 * and {@code -Dbench.initiator-cpus} give the target CPUs of its own ({@link Affinity}). {@code -Dbench.sched=true} adds, per K, how
 * long each engine thread waited for a CPU while the transfers ran ({@link RunQueueWait}); {@code
 * -Dbench.caller=true} has each initiator's thread drive its engine ({@link #CALLER}).
 */
public final class FanInBench {

    /**
     * {@code -Dbench.sched=true} (Linux): per K, how long each engine thread waited for a CPU during the
     * measured transfers, its stretches of 2 ms or more, and the slowest transfers with their start,
     * all in ms from the common start (see {@link RunQueueWait}).
     */
    private static final boolean SCHED = Boolean.getBoolean("bench.sched") && RunQueueWait.available();

    /**
     * {@code -Dbench.caller=true}: each initiator's thread drives its engine ({@code progress()}) until its
     * transfer ends, as a NIXL host's poller does through {@code checkXfer}, instead of waiting in
     * {@code await} for the engine's thread (one hand-off to that thread and one back per transfer).
     */
    private static final boolean CALLER = Boolean.getBoolean("bench.caller");

    private FanInBench() {
    }

    public static void main(String[] args) throws Exception {
        int[] ks = Arrays.stream((args.length > 0 ? args[0] : "1,8,32,64").split(",")).mapToInt(Integer::parseInt)
                .toArray();
        int block = args.length > 1 ? Integer.parseInt(args[1]) : 1 << 20;
        int transfers = args.length > 2 ? Integer.parseInt(args[2]) : 40;
        int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        int targetIo = args.length > 4 ? Integer.parseInt(args[4]) : LoopbackConfig.defaults().ioThreads();
        boolean devmem = args.length > 5 && args[5].equals("on");
        int initiatorIo = args.length > 6 ? Integer.parseInt(args[6]) : LoopbackConfig.defaults().ioThreads();
        Progress idle = args.length > 7 ? Progress.defaults().withSpin(Duration.ofNanos(Long.parseLong(args[7])))
                : Progress.defaults();
        if ((TARGET_CPUS == null) != (INITIATOR_CPUS == null)) {
            throw new IllegalArgumentException("set both -Dbench.target-cpus and -Dbench.initiator-cpus, or neither");
        }
        System.out.printf("fan-in, %d B blocks, %d transfers (+%d warm-up) per initiator, %d target I/O threads,"
                + " %d per initiator, devmem %s, idle %s, inline limit %d B (target %d B), target agents %d, %d CPUs%s%n",
                block, transfers, warmup, targetIo, initiatorIo, devmem ? "on" : "off",
                idle.spin().toNanos() + " ns spin", INLINE, TARGET_INLINE, TARGET_AGENTS,
                Runtime.getRuntime().availableProcessors(), TARGET_CPUS == null ? ""
                        : " (target on CPUs " + TARGET_CPUS + ", the rest on " + INITIATOR_CPUS + ")");
        System.out.println("K     aggregate GB/s   p50 us      p99 us      p99/p50   raw TCP GB/s   x raw   "
                + "raw p50 us  raw p99 us  raw p99/p50");
        for (int k : ks) {
            Result r = run(k, block, transfers, warmup, targetIo, initiatorIo, devmem, idle);
            Result raw = raw(k, block, transfers, warmup, targetIo);
            System.out.printf("%-5d %-16.2f %-11.1f %-11.1f %-9.2f %-14.2f %-7.2f %-11.1f %-11.1f %.2f%n", k, r.gbps,
                    r.p50Us, r.p99Us, r.p99Us / r.p50Us, raw.gbps, r.gbps / raw.gbps, raw.p50Us, raw.p99Us,
                    raw.p99Us / raw.p50Us);
        }
    }

    record Result(double gbps, double p50Us, double p99Us) {
        /** Aggregate GB/s of {@code bytes} over {@code wall} ns, and the p50 and p99 of {@code latencies} (ns). */
        static Result of(long bytes, long wall, long[][] latencies) {
            long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
            return new Result((double) bytes / wall, all[all.length / 2] / 1e3,
                    all[(int) Math.min(all.length - 1, Math.ceil(all.length * 0.99) - 1)] / 1e3);
        }
    }

    /** The engines' inline limit: {@code -Dbench.inline=BYTES}, else the engine default. */
    private static final int INLINE = Integer.getInteger("bench.inline", EngineConfig.DEFAULT_INLINE);
    /** The target's own inline limit, which bounds the initiators' inline WRITEs: {@code -Dbench.target-inline=BYTES}. */
    private static final int TARGET_INLINE = Integer.getInteger("bench.target-inline", INLINE);
    /** The target's progress agents, each serving the initiators whose names hash to it: {@code -Dbench.agents=N}. */
    private static final int TARGET_AGENTS = Integer.getInteger("bench.agents", 1);
    /**
     * {@code -Dbench.target-cpus=LIST -Dbench.initiator-cpus=LIST} (taskset lists, Linux, both or neither):
     * the target's threads (and the raw baseline's readers) run on the first, everything else on the second.
     */
    private static final String TARGET_CPUS = System.getProperty("bench.target-cpus");
    private static final String INITIATOR_CPUS = System.getProperty("bench.initiator-cpus");

    private static EngineConfig config(String name, Progress idle, int inline) {
        return LoopbackNode.config(name).withProgress(idle).withInlineLimit(inline);
    }

    static Result run(int k, int block, int transfers, int warmup, int targetIo, int initiatorIo, boolean devmem,
                      Progress idle) throws Exception {
        LoopbackConfig transport = LoopbackConfig.defaults().withDevmem(devmem);
        List<LoopbackNode> initiators = new ArrayList<>();
        Set<Integer> seen = SCHED ? RunQueueWait.tids() : new HashSet<>();
        Map<Integer, String> engineThreads = new LinkedHashMap<>();
        if (TARGET_CPUS != null) {
            Affinity.process(INITIATOR_CPUS);
        }
        Set<Integer> before = RunQueueWait.tids();
        try (LoopbackNode target = LoopbackNode.start(config("fanin-target", idle, TARGET_INLINE).withAgents(TARGET_AGENTS),
                transport.withIoThreads(targetIo))) {
            if (TARGET_CPUS != null) {
                // its agents; the transport's I/O threads start later, from the agents, and inherit their CPUs
                for (int tid : RunQueueWait.tids()) {
                    if (!before.contains(tid)) {
                        Affinity.thread(tid, TARGET_CPUS);
                    }
                }
            }
            name(engineThreads, seen, "target");
            long region = target.allocate((long) k * block);
            RegisteredMemory published = target.register(region, (long) k * block);
            long[] sources = new long[k];
            try {
                for (int i = 0; i < k; i++) {
                    LoopbackNode n = LoopbackNode.start(config("fanin-" + i, CALLER ? idle.withDriver(Progress.Driver.CALLER) : idle, INLINE),
                            transport.withIoThreads(initiatorIo));
                    initiators.add(n);
                    name(engineThreads, seen, "initiator " + i);
                    n.introduce(target);
                    n.engine.loadRemoteMetadata(target.name(), published.publicMetadata());
                    sources[i] = n.allocate(block);
                    Bytes.fill(sources[i], block, 1000 + i);
                    n.register(sources[i], block);
                }
                long[][] latencies = new long[k][transfers];
                long[][] starts = new long[k][transfers];
                CyclicBarrier warmed = new CyclicBarrier(k + 1);
                CyclicBarrier start = new CyclicBarrier(k + 1);
                AtomicReference<Throwable> failure = new AtomicReference<>();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < k; i++) {
                    int me = i;
                    Thread t = new Thread(() -> {
                        try {
                            TransferEngine e = initiators.get(me).engine;
                            Session s = e.session(target.name());
                            List<MemoryDescriptor> local = List.of(MemoryDescriptor.dram(sources[me], block));
                            List<MemoryDescriptor> remote = List.of(MemoryDescriptor.dram(region + (long) me * block, block));
                            for (int w = 0; w < warmup; w++) {
                                write(e, s, local, remote, me, -1 - w);
                            }
                            warmed.await();
                            start.await();
                            for (int n = 0; n < transfers; n++) {
                                starts[me][n] = System.nanoTime();
                                latencies[me][n] = write(e, s, local, remote, me, n);
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                            warmed.reset();
                            start.reset();
                        }
                    }, "fanin-initiator-" + i);
                    threads.add(t);
                    t.start();
                }
                warmed.await();
                RunQueueWait waits = null;
                if (SCHED) {
                    // the loopback transports start their I/O threads with the first connection
                    name(engineThreads, seen, "I/O");
                    waits = new RunQueueWait(engineThreads(engineThreads), 1_000_000L, 2_000_000L);
                    waits.start();
                }
                start.await();
                long t0 = System.nanoTime();
                for (Thread t : threads) {
                    t.join();
                }
                long wall = System.nanoTime() - t0;
                if (waits != null) {
                    waits.stop();
                }
                if (failure.get() != null) {
                    throw new IllegalStateException("an initiator failed", failure.get());
                }
                check(target, region, sources, block, k, transfers + warmup);
                if (waits != null) {
                    report(waits, t0, starts, latencies);
                }
                return Result.of((long) k * transfers * block, wall, latencies);
            } finally {
                for (LoopbackNode n : initiators) {
                    n.close();
                }
            }
        }
    }

    /**
     * Aggregate GB/s of K blocking senders, one socket each, writing {@code transfers} blocks (after
     * {@code warmup}) into {@code readers} selector threads that read each block whole into a buffer of
     * its socket and answer one byte; latency per block from its first write to its acknowledgement.
     */
    static Result raw(int k, int block, int transfers, int warmup, int readers) throws Exception {
        List<SocketChannel> senders = new ArrayList<>();
        List<SocketChannel> receivers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), k);
            for (int i = 0; i < k; i++) {
                SocketChannel c = SocketChannel.open(server.getLocalAddress());
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                senders.add(c);
                SocketChannel r = server.accept();
                r.setOption(StandardSocketOptions.TCP_NODELAY, true);
                r.configureBlocking(false);
                receivers.add(r);
            }
            for (int t = 0; t < readers; t++) {
                Selector sel = Selector.open();
                for (int i = t; i < k; i += readers) {
                    receivers.get(i).register(sel, SelectionKey.OP_READ, ByteBuffer.allocateDirect(block));
                }
                Thread reader = new Thread(() -> {
                    if (TARGET_CPUS != null) {
                        Affinity.self(TARGET_CPUS);
                    }
                    ByteBuffer ack = ByteBuffer.allocateDirect(1);
                    try (sel) {
                        while (!Thread.currentThread().isInterrupted()) {
                            sel.select(key -> {
                                try {
                                    ByteBuffer b = (ByteBuffer) key.attachment();
                                    SocketChannel ch = (SocketChannel) key.channel();
                                    if (ch.read(b) < 0) {
                                        key.cancel();
                                        return;
                                    }
                                    if (!b.hasRemaining()) {
                                        b.clear();
                                        ch.write(ack.clear());
                                    }
                                } catch (IOException e) {
                                    key.cancel();
                                }
                            }, 100);
                        }
                    } catch (IOException e) {
                        failure.compareAndSet(null, e);
                    }
                }, "fanin-raw-reader-" + t);
                reader.setDaemon(true);
                threads.add(reader);
                reader.start();
            }
            CyclicBarrier start = new CyclicBarrier(k + 1);
            List<Thread> writers = new ArrayList<>();
            long[][] latencies = new long[k][transfers];
            for (int i = 0; i < k; i++) {
                SocketChannel c = senders.get(i);
                long[] mine = latencies[i];
                Thread w = new Thread(() -> {
                    ByteBuffer data = ByteBuffer.allocateDirect(block);
                    ByteBuffer ack = ByteBuffer.allocateDirect(1);
                    try {
                        for (int n = -warmup; n < transfers; n++) {
                            if (n == 0) {
                                start.await();
                            }
                            long t0 = System.nanoTime();
                            data.clear();
                            while (data.hasRemaining()) {
                                c.write(data);
                            }
                            ack.clear();
                            while (ack.hasRemaining()) {
                                if (c.read(ack) < 0) {
                                    throw new IOException("receiver closed");
                                }
                            }
                            if (n >= 0) {
                                mine[n] = System.nanoTime() - t0;
                            }
                        }
                    } catch (Exception e) {
                        failure.compareAndSet(null, e);
                        start.reset();
                    }
                }, "fanin-raw-writer-" + i);
                writers.add(w);
                w.start();
            }
            start.await();
            long t0 = System.nanoTime();
            for (Thread w : writers) {
                w.join();
            }
            long wall = System.nanoTime() - t0;
            if (failure.get() != null) {
                throw new IllegalStateException("raw fan-in failed", failure.get());
            }
            return Result.of((long) k * transfers * block, wall, latencies);
        } finally {
            for (Thread t : threads) {
                t.interrupt();
            }
            for (SocketChannel c : senders) {
                c.close();
            }
            for (SocketChannel c : receivers) {
                c.close();
            }
        }
    }

    /**
     * Notes the threads born since {@code seen} was taken as {@code owner}'s, and adds them to
     * {@code seen}. Without {@code -Dbench.sched} it does nothing.
     */
    private static void name(Map<Integer, String> owners, Set<Integer> seen, String owner) {
        if (SCHED) {
            for (int tid : RunQueueWait.tids()) {
                if (seen.add(tid)) {
                    owners.put(tid, owner);
                }
            }
        }
    }

    /**
     * The engine threads among {@code owners}, labelled {@code "<owner> agent"} (a progress thread) or
     * {@code "<owner> <tid>"} (a loopback I/O thread). Read once the threads run: a new thread carries
     * its name in the kernel only after it started.
     */
    private static Map<Integer, String> engineThreads(Map<Integer, String> owners) {
        Map<Integer, String> labels = new LinkedHashMap<>();
        owners.forEach((tid, owner) -> {
            String comm = RunQueueWait.comm(tid);
            if (comm.startsWith("tcpx4j-agent")) {
                labels.put(tid, owner + " agent");
            } else if (comm.startsWith("tcpx4j-loopbac")) {
                labels.put(tid, owner + " " + tid);
            }
        });
        return labels;
    }

    /** The -Dbench.sched report of one K: per thread, the stretches, the slowest 1 % of transfers. */
    private static void report(RunQueueWait waits, long t0, long[][] starts, long[][] latencies) {
        long uptimeAtStart = ManagementFactory.getRuntimeMXBean().getUptime()
                - (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("  measured transfers from JVM uptime %d ms (-Xlog's uptime); the sampler used %.1f ms of CPU;"
                + " engine threads meanwhile (I/O threads: target's and initiators' alike):%n", uptimeAtStart,
                waits.samplerCpuNanos() / 1e6);
        waits.perThread().forEach(l -> System.out.println("    " + l));
        List<RunQueueWait.Stretch> stretches = waits.stretches();
        System.out.println("  stretches of 2 ms or more without a CPU (" + stretches.size() + ", first 30):");
        stretches.stream().limit(30).forEach(s -> System.out.printf("    at %9.2f ms  %6.2f ms  %s%n",
                (s.startNanos() - t0) / 1e6, s.nanos() / 1e6, s.label()));
        List<long[]> all = new ArrayList<>();
        for (int i = 0; i < starts.length; i++) {
            for (int n = 0; n < starts[i].length; n++) {
                all.add(new long[] {starts[i][n], latencies[i][n], i});
            }
        }
        all.sort((a, b) -> Long.compare(b[1], a[1]));
        List<long[]> slowest = new ArrayList<>(all.subList(0, Math.max(1, all.size() / 100)));
        slowest.sort((a, b) -> Long.compare(a[0], b[0]));
        System.out.println("  slowest 1 % of transfers, by start (first 30):");
        slowest.stream().limit(30).forEach(t -> System.out.printf("    at %9.2f ms  %6.2f ms  initiator %d%n",
                (t[0] - t0) / 1e6, t[1] / 1e6, t[2]));
    }

    private static long write(TransferEngine e, Session s, List<MemoryDescriptor> local, List<MemoryDescriptor> remote,
                              int initiator, int n) throws InterruptedException {
        long t0 = System.nanoTime();
        Transfer t = s.write(local, remote, (initiator + ":" + n).getBytes(StandardCharsets.UTF_8));
        TransferStatus status = e.driveUntilEnded(t, Duration.ofMinutes(1));
        if (status != TransferStatus.DONE) {
            throw new IllegalStateException("initiator " + initiator + " transfer " + n + " ended " + status + ": "
                    + t.error());
        }
        return System.nanoTime() - t0;
    }

    /** Every slice equals its source; exactly one notification per transfer, from its initiator. */
    private static void check(LoopbackNode target, long region, long[] sources, int block, int k, int perInitiator)
            throws InterruptedException {
        for (int i = 0; i < k; i++) {
            long at = Bytes.firstMismatchBetween(sources[i], region + (long) i * block, block);
            if (at >= 0) {
                throw new IllegalStateException("slice of initiator " + i + " differs at byte " + at);
            }
        }
        Set<String> seen = new HashSet<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (seen.size() < k * perInitiator && System.nanoTime() < deadline) {
            for (Notification n : target.engine.drainNotifications()) {
                String m = new String(n.message(), StandardCharsets.UTF_8);
                if (!n.agent().equals("fanin-" + m.substring(0, m.indexOf(':'))) || !seen.add(m)) {
                    throw new IllegalStateException("unexpected or repeated notification " + m + " from " + n.agent());
                }
            }
            Thread.sleep(1);
        }
        if (seen.size() != k * perInitiator) {
            throw new IllegalStateException(seen.size() + " notifications, expected " + k * perInitiator);
        }
    }
}
