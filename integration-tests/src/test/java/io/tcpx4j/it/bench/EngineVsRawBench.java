package io.tcpx4j.it.bench;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.cli.JitQuiet;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.Progress;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.it.transfer.Bytes;
import io.tcpx4j.it.transfer.LoopbackNode;
import io.tcpx4j.transport.loopback.LoopbackConfig;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Throughput of the whole engine over the loopback transport against a raw Java NIO socket copy with
 * the same number of sockets, in the same run.
 *
 * <p>Engine: two engines in one JVM, each with its own {@code LoopbackTransport} and progress thread,
 * composed with Guice as an application does; one 64 MiB WRITE (512 KiB chunks, send window 12) per
 * round, timed from {@code write()} to DONE (DONE means the target acknowledged the last byte).
 * Raw: the same 64 MiB over persistent blocking {@code SocketChannel}s, one writer and one reader
 * thread per socket, chunk k on socket k mod S, timed from start to the last byte read. Rounds of
 * the two alternate (raw, engine, raw, engine...), so load on a shared machine hits both alike; the
 * figure is the median after warm-up (the given rounds, then on until the JIT is quiet). Destinations
 * are poisoned before and checked after each round.
 *
 * <p>Layouts ({@code -Dbench.layouts}, default {@code 1x2,2x1}): {@code CxS} is C engine channels with S
 * sockets per comm, against a raw copy over C*S sockets. devmem off (the receive lands in place) and
 * on (every receive lands in permuted bounce pages and the engine's CPU unpacker copies it out: one
 * memcpy more than raw) are measured separately.
 *
 * <p>The fair comparison is 2x1, the engine's default of 2 channels with one socket each: the loopback
 * transport drives each comm from one I/O thread and spreads comms over its I/O threads (2 by
 * default), so in 2x1 each socket has its own I/O thread at each end, as in the raw copy each socket
 * has its own writer and reader thread. In 1x2 both sockets of the one comm share one I/O thread
 * per side, half the raw copy's threads for the same sockets; it is printed for completeness.
 *
 * <p>Run, from the repository root:
 * <pre>{@code
 * ./mvnw -B -q test-compile dependency:build-classpath -pl integration-tests -am \
 *     -Dmdep.outputFile=/tmp/it-cp.txt -Dmdep.includeScope=test
 * java -cp integration-tests/target/test-classes:$(cat /tmp/it-cp.txt) io.tcpx4j.it.bench.EngineVsRawBench [rounds] [warmup]
 * }</pre>
 * Defaults: 11 rounds after at least 3 warm-up, and more until no JIT compilation finished for 1 s (at
 * most 60 s; {@code -Dbench.jitQuiet=false}: the given warm-up only). Results and their reading:
 * docs/PERFORMANCE.md.
 * Other knobs: {@code -Dbench.ioThreads} (loopback I/O threads per transport, default 2),
 * {@code -Dbench.chunk} (bytes), {@code -Dbench.window} (send window), {@code -Dbench.modes} (off,on),
 * {@code -Dbench.cpu=true} (CPU time and context switches per thread group and round, Linux only), {@code
 * -Dbench.spinNanos} (how long the engines' drivers spin before they block).
 */
public final class EngineVsRawBench {

    private static final int TOTAL = 64 << 20;
    private static final int RAW_CHUNK = 512 << 10;
    /** Per-thread CPU time and context switches per round, from /proc ({@code -Dbench.cpu=true}). */
    private static final boolean CPU = Boolean.getBoolean("bench.cpu") && ThreadCpu.available();
    private static String cpuReport = "";

    private EngineVsRawBench() {
    }

    /** {@code -Dbench.jitQuiet=false}: warm up the given rounds only, not also until the JIT is quiet. */
    private static final boolean JIT_QUIET = Boolean.parseBoolean(System.getProperty("bench.jitQuiet", "true"));
    private static final long JIT_QUIET_NANOS = 1_000_000_000L;
    private static final long WARMUP_CAP_NANOS = 60_000_000_000L;

    /** {@code -Dbench.spinNanos=N}: how long the engines' drivers spin before they block ({@link Progress}). */
    private static final Progress PROGRESS = Progress.defaults().withSpin(java.time.Duration.ofNanos(
            Long.getLong("bench.spinNanos", Progress.DEFAULT_SPIN.toNanos())));

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 11;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        String[] layouts = System.getProperty("bench.layouts", "1x2,2x1").split(",");
        String[] modes = System.getProperty("bench.modes", "off,on").split(",");
        int ioThreads = Integer.getInteger("bench.ioThreads", 2);
        int chunk = Integer.getInteger("bench.chunk", EngineConfig.DEFAULT_CHUNK);
        int window = Integer.getInteger("bench.window", 12);

        System.out.printf("64 MiB WRITE, %d rounds after >= %d warm-up, chunk %d KiB, send window %d, %d loopback"
                + " I/O threads per transport, %d CPUs%n", rounds, warmup, chunk >> 10, window, ioThreads,
                Runtime.getRuntime().availableProcessors());
        System.out.printf("%-7s %-7s %10s %10s %7s%n", "layout", "devmem", "raw GB/s", "engine", "ratio");
        for (String layout : layouts) {
            String[] cs = layout.trim().split("x");
            int channels = Integer.parseInt(cs[0]);
            int sockets = Integer.parseInt(cs[1]);
            for (String mode : modes) {
                boolean devmem = mode.trim().equals("on");
                double[][] r = measure(channels, sockets, devmem, ioThreads, chunk, window, rounds, warmup);
                double raw = median(r[0]);
                double engine = median(r[1]);
                System.out.printf("%-7s %-7s %10.2f %10.2f %7.2f   raw %s  engine %s%n", layout, mode.trim(), raw,
                        engine, engine / raw, spread(r[0]), spread(r[1]));
                System.out.print(cpuReport);
            }
        }
    }

    /** Alternating raw and engine rounds; returns {raw GB/s per round, engine GB/s per round}. */
    private static double[][] measure(int channels, int sockets, boolean devmem, int ioThreads, int chunk,
                                      int window, int rounds, int warmup) throws Exception {
        LoopbackConfig transport = LoopbackConfig.defaults().withSocketsPerComm(sockets).withDevmem(devmem)
                .withIoThreads(ioThreads);
        double[] raw = new double[rounds];
        double[] engine = new double[rounds];
        try (LoopbackNode a = LoopbackNode.start(config("bench-a", channels, chunk, window), transport);
             LoopbackNode b = LoopbackNode.start(config("bench-b", channels, chunk, window), transport);
             RawCopy copy = new RawCopy(channels * sockets)) {
            a.introduce(b);
            long src = a.allocate(TOTAL);
            long dst = b.allocate(TOTAL);
            Bytes.fill(src, TOTAL, 42);
            a.register(src, TOTAL);
            RegisteredMemory target = b.register(dst, TOTAL);
            a.engine.loadRemoteMetadata(b.name(), target.publicMetadata());
            Session session = a.engine.session(b.name());
            ThreadCpu rawCpu = new ThreadCpu();
            ThreadCpu engineCpu = new ThreadCpu();
            warmUp(copy, session, src, dst, warmup);
            for (int i = 0; i < rounds; i++) {
                boolean measured = CPU;
                if (measured) {
                    rawCpu.start();
                }
                double r = copy.round(src, dst);
                if (measured) {
                    rawCpu.stop();
                    engineCpu.start();
                }
                double e = engineRound(session, src, dst);
                if (measured) {
                    engineCpu.stop();
                }
                raw[i] = r;
                engine[i] = e;
            }
            if (CPU) {
                cpuReport = "    raw rounds:\n" + rawCpu.report(rounds) + "    engine rounds:\n" + engineCpu.report(rounds);
            }
        }
        return new double[][] {raw, engine};
    }

    /**
     * At least {@code rounds} pairs of rounds, then more until no JIT compilation finished for
     * {@link #JIT_QUIET_NANOS} (unless {@code -Dbench.jitQuiet=false}), for at most {@link #WARMUP_CAP_NANOS}.
     * The engine's per-chunk code reaches C2 only after tens of rounds; on 2 CPUs the compiler thread
     * meanwhile takes one of them, which slows the engine's rounds more than the raw copy's (whose work
     * is in the kernel).
     */
    private static void warmUp(RawCopy copy, Session session, long src, long dst, int rounds) throws Exception {
        System.out.print("    warm-up: ");
        System.out.flush();
        JitQuiet jit = JitQuiet.ofThisJvm();
        long start = System.nanoTime();
        int done = 0;
        boolean quiet;
        while (true) {
            long now = System.nanoTime();
            quiet = !JIT_QUIET || jit.quietFor(JIT_QUIET_NANOS, now);
            if (done >= rounds && (quiet || now - start > WARMUP_CAP_NANOS)) {
                break;
            }
            copy.round(src, dst);
            engineRound(session, src, dst);
            done++;
        }
        System.out.printf("%d rounds of each in %.1f s%s%n", done, (System.nanoTime() - start) / 1e9,
                JIT_QUIET ? (quiet ? ", JIT quiet" : ", JIT still compiling at the cap") : "");
    }

    private static EngineConfig config(String name, int channels, int chunk, int window) {
        return LoopbackNode.config(name).withChannels(channels).withChunkSize(chunk).withWindows(window, 16)
                .withProgress(PROGRESS);
    }

    private static double engineRound(Session session, long src, long dst) throws InterruptedException {
        NativeMemory.fill(dst, TOTAL, Bytes.POISON);
        long t0 = System.nanoTime();
        Transfer t = session.write(List.of(MemoryDescriptor.dram(src, TOTAL)), List.of(MemoryDescriptor.dram(dst, TOTAL)),
                null);
        TransferStatus s = t.await(Duration.ofMinutes(1));
        long ns = System.nanoTime() - t0;
        if (s != TransferStatus.DONE) {
            throw new IllegalStateException("engine round ended " + s + ": " + t.error());
        }
        check(src, dst);
        return TOTAL / (double) ns;
    }

    private static void check(long src, long dst) {
        long at = Bytes.firstMismatchBetween(src, dst, TOTAL);
        if (at >= 0) {
            throw new IllegalStateException("destination differs from the source at byte " + at);
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static String spread(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return String.format("[%.2f..%.2f]", s[0], s[s.length - 1]);
    }

    /**
     * Persistent loopback socket pairs with a persistent writer and reader thread per socket; each
     * round copies 64 MiB, chunk k on socket k mod S.
     */
    private static final class RawCopy implements AutoCloseable {
        private final SocketChannel[] out;
        private final SocketChannel[] in;
        private final Thread[] threads;
        private final CyclicBarrier go;
        private final CyclicBarrier done;
        private volatile long src;
        private volatile long dst;
        private volatile boolean closing;
        private volatile Throwable failure;

        RawCopy(int sockets) throws IOException {
            out = new SocketChannel[sockets];
            in = new SocketChannel[sockets];
            try (ServerSocketChannel server = ServerSocketChannel.open()) {
                server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                for (int i = 0; i < sockets; i++) {
                    out[i] = SocketChannel.open(server.getLocalAddress());
                    out[i].setOption(StandardSocketOptions.TCP_NODELAY, true);
                    in[i] = server.accept();
                }
            }
            go = new CyclicBarrier(2 * sockets + 1);
            done = new CyclicBarrier(2 * sockets + 1);
            threads = new Thread[2 * sockets];
            for (int i = 0; i < sockets; i++) {
                int sock = i;
                threads[2 * i] = worker("raw-w" + i, () -> pipe(out[sock], src, sock, sockets, true));
                threads[2 * i + 1] = worker("raw-r" + i, () -> pipe(in[sock], dst, sock, sockets, false));
            }
        }

        private Thread worker(String name, Runnable body) {
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        go.await();
                        if (closing) {
                            return;
                        }
                        try {
                            body.run();
                        } catch (RuntimeException e) {
                            failure = e;
                        }
                        done.await();
                    }
                } catch (InterruptedException | BrokenBarrierException e) {
                    // closing
                }
            }, name);
            t.setDaemon(true);
            t.start();
            return t;
        }

        double round(long src, long dst) throws Exception {
            NativeMemory.fill(dst, TOTAL, Bytes.POISON);
            this.src = src;
            this.dst = dst;
            long t0 = System.nanoTime();
            go.await(1, TimeUnit.MINUTES);
            done.await(1, TimeUnit.MINUTES);
            long ns = System.nanoTime() - t0;
            if (failure != null) {
                throw new IllegalStateException("raw copy failed", failure);
            }
            check(src, dst);
            return TOTAL / (double) ns;
        }

        private static void pipe(SocketChannel ch, long base, int sock, int sockets, boolean write) {
            ByteBuffer view = NativeMemory.newView();
            try {
                for (long off = (long) sock * RAW_CHUNK; off < TOTAL; off += (long) sockets * RAW_CHUNK) {
                    NativeMemory.retarget(view, base + off, (int) Math.min(RAW_CHUNK, TOTAL - off));
                    while (view.hasRemaining()) {
                        if ((write ? ch.write(view) : ch.read(view)) < 0) {
                            throw new IOException("EOF");
                        }
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() throws Exception {
            closing = true;
            try {
                go.await(5, TimeUnit.SECONDS);
            } catch (BrokenBarrierException | TimeoutException e) {
                for (Thread t : threads) {
                    t.interrupt();
                }
            }
            for (int i = 0; i < out.length; i++) {
                out[i].close();
                in[i].close();
            }
        }
    }
}
