package io.tcpx4j.it.gpu;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.cuda.CudaDeviceMemory;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.protocol.RegionMetadata;
import io.tcpx4j.domain.port.out.DeviceMemory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * GPU-to-GPU throughput of tcpx4j between two processes, one engine per GPU, over the loopback
 * transport: WRITE and READ, VRAM to VRAM, for a sweep of block sizes; and, as the ceiling, a raw
 * Java NIO stream between the same two processes over the same number of TCP sockets.
 *
 * <pre>
 * java -cp ... io.tcpx4j.it.gpu.GpuPairBench [--kind VRAM|DRAM] [--gpu 0] [--peer-gpu 1]
 *      [--channels 2] [--sockets 2] [--io-threads 2] [--chunk 512K] [--sizes 4K,64K,1M,16M,64M] [--reps 3]
 *      [--bytes-per-rep 512M] [--warmup-seconds 3] [--raw true] [--profile false] [--label name]
 *      [--out results.jsonl]
 * </pre>
 *
 * <p>This process (the initiator) runs its engine on GPU {@code --gpu} and starts a child JVM, the
 * target, with {@code CUDA_VISIBLE_DEVICES=--peer-gpu}, so each process sees one GPU. They exchange
 * conn-info and region metadata over the child's stdin/stdout (lines starting with {@code @@}; the
 * child logs to stderr). Per block size and op, one repetition posts enough transfers of that size
 * to move about {@code --bytes-per-rep} (at least 8, at most 2000), all at once, each with a
 * notification; it ends for READ when every transfer is DONE here, for WRITE when the target has
 * received every notification (so every byte has landed there) and said so with a notification back.
 * Before the first measured size, repetitions of every size and both ops run for
 * {@code --warmup-seconds} (at least one pass), so that no row is measured while the JIT still
 * compiles the engines' paths: a 1 MiB row measured first read half of what it read after the larger
 * sizes. The median of {@code --reps} is reported after one further warm-up repetition. After each
 * size the destination is checked against the source by CRC32C (each side checksums its own memory),
 * having been poisoned before.
 *
 * <p>Raw TCP: the child connects {@code channels x sockets} sockets, and every block is striped over
 * them (one writer thread per socket there, one reader per socket here), host memory to host memory;
 * timed here from "go" to the last byte.
 *
 * <p>{@code --profile true}: for the largest size, the CPU share and sampled frames of every tcpx4j
 * thread of both processes over the measured repetitions ({@link ThreadProfile}), on stderr as
 * lines starting with {@code PROFILE}.
 *
 * <p>Output: one JSON object per line on stdout (and appended to {@code --out}).
 * {@code --kind DRAM} runs the same engines on host memory, receives landing in place (no GPU needed):
 * what the engine moves at this socket count without the copies through the GPU's PCIe link.
 */
public final class GpuPairBench {

    private static final String TAG = "@@ ";
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    private final Map<String, String> opts;

    private GpuPairBench(Map<String, String> opts) {
        this.opts = opts;
    }

    public static void main(String[] args) throws Exception {
        run(args);
        System.exit(0); // engines' and JCuda's threads are daemons, but be explicit
    }

    /** Runs the initiator (or, with {@code --role target}, the child's side) and returns. */
    static void run(String... args) throws Exception {
        Map<String, String> opts = new HashMap<>(Map.of("kind", "VRAM", "gpu", "0", "peer-gpu", "1", "channels", "2",
                "sockets", "2", "io-threads", "2", "sizes", "4K,16K,64K,256K,1M,4M,16M,64M", "reps", "3",
                "bytes-per-rep", "512M", "raw", "true"));
        opts.put("chunk", "512K");
        opts.put("warmup-seconds", "3");
        opts.put("role", "initiator");
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got " + args[i]);
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        GpuPairBench bench = new GpuPairBench(opts);
        if (opts.get("role").equals("target")) {
            bench.target();
        } else {
            bench.initiator();
        }
    }

    // ------------------------------------------------------------------ options

    private int integer(String key) {
        return Integer.parseInt(opts.get(key));
    }

    private long[] sizes() {
        return Arrays.stream(opts.get("sizes").split(",")).mapToLong(GpuPairBench::parseSize).toArray();
    }

    static long parseSize(String s) {
        s = s.trim().toUpperCase(Locale.ROOT);
        long mult = switch (s.charAt(s.length() - 1)) {
            case 'K' -> 1L << 10;
            case 'M' -> 1L << 20;
            case 'G' -> 1L << 30;
            default -> 1;
        };
        return mult == 1 ? Long.parseLong(s) : Long.parseLong(s.substring(0, s.length() - 1)) * mult;
    }

    private MemoryKind kind() {
        return MemoryKind.valueOf(opts.get("kind"));
    }

    private String label() {
        long chunk = parseSize(opts.get("chunk"));
        return opts.getOrDefault("label", "tcpx4j-" + integer("channels") + "x" + integer("sockets")
                + (chunk == 512 << 10 ? "" : "-c" + (chunk >> 10) + "K") + (kind() == MemoryKind.DRAM ? "-dram" : ""));
    }

    private DeviceMemory openMemory() {
        return kind() == MemoryKind.VRAM ? new CudaDeviceMemory() : new HostMemory();
    }

    private long maxSize() {
        return Arrays.stream(sizes()).max().orElse(1);
    }

    // ------------------------------------------------------------------ target (child process)

    /** Serves the initiator: its engine's memory, checksums, notification echo, raw TCP sender. */
    private void target() throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        System.setOut(System.err); // anything else printed goes to the log, not the protocol
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        DeviceMemory memory = openMemory();
        try {
            serve(memory, in, out);
        } finally {
            memory.close();
        }
    }

    private void serve(DeviceMemory memory, BufferedReader in, PrintStream out) throws Exception {
        // CUDA_VISIBLE_DEVICES leaves this process one GPU: ordinal 0
        try (GpuNode node = new GpuNode("target", memory, 0, integer("channels"), integer("sockets"),
                integer("io-threads"), (int) parseSize(opts.get("chunk")))) {
            MemoryDescriptor src = node.allocate(maxSize());
            MemoryDescriptor dst = node.allocate(maxSize());
            node.fillRandom(src, 2);
            node.poison(dst, (byte) 0xA5);
            RegisteredMemory rs = node.engine.register(src);
            RegisteredMemory rd = node.engine.register(dst);
            out.println(TAG + "HELLO " + b64(node.engine.connInfo()) + " " + b64(rs.publicMetadata()) + " "
                    + b64(rd.publicMetadata()) + " " + src.address() + " " + dst.address());
            ThreadProfile profile = new ThreadProfile();
            Echo echo = new Echo(node);
            Thread echoThread = new Thread(echo, "notification-echo");
            echoThread.setDaemon(true);
            echoThread.start();
            String line;
            while ((line = in.readLine()) != null) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "PEER" -> {
                        node.engine.loadPeer(w[1], unb64(w[2]));
                        echo.peer = w[1];
                        out.println(TAG + "OK");
                    }
                    case "EXPECT" -> {
                        echo.expect(w[1], Integer.parseInt(w[2]));
                        out.println(TAG + "OK");
                    }
                    case "CRC" -> {
                        MemoryDescriptor d = (w[1].equals("src") ? src : dst).slice(0, Long.parseLong(w[2]));
                        out.println(TAG + "CRC " + node.crc(d));
                    }
                    case "PROF" -> {
                        if (w[1].equals("start")) {
                            profile.start();
                            out.println(TAG + "OK");
                        } else {
                            out.println(TAG + "PROF " + b64(profile.stop().getBytes(StandardCharsets.UTF_8)));
                        }
                    }
                    case "POISON" -> {
                        node.poison(dst, (byte) 0xA5);
                        out.println(TAG + "OK");
                    }
                    case "RAW" -> rawSend(in, out, Integer.parseInt(w[1]), Integer.parseInt(w[2]),
                            Long.parseLong(w[3]), Integer.parseInt(w[4]));
                    case "QUIT" -> {
                        echo.stop = true;
                        echoThread.join(1000);
                        out.println(TAG + "BYE");
                        return;
                    }
                    default -> throw new IllegalStateException("unknown command " + line);
                }
            }
        }
    }

    /**
     * Target side: counts the notifications of each round ("round:N") and, when the count expected
     * for it is reached, notifies the initiator "done:round".
     */
    private static final class Echo implements Runnable {
        final GpuNode node;
        final Map<String, Integer> expected = new ConcurrentHashMap<>();
        final Map<String, Integer> seen = new HashMap<>();
        volatile String peer;
        volatile boolean stop;

        Echo(GpuNode node) {
            this.node = node;
        }

        void expect(String round, int count) {
            expected.put(round, count);
        }

        @Override
        public void run() {
            while (!stop) {
                List<Notification> got = node.engine.drainNotifications();
                for (Notification n : got) {
                    String round = new String(n.message(), StandardCharsets.UTF_8);
                    seen.merge(round, 1, Integer::sum);
                }
                for (Map.Entry<String, Integer> e : expected.entrySet()) {
                    if (seen.getOrDefault(e.getKey(), 0) >= e.getValue()) {
                        expected.remove(e.getKey());
                        seen.remove(e.getKey());
                        node.engine.session(peer).notify(("done:" + e.getKey()).getBytes(StandardCharsets.UTF_8));
                    }
                }
                if (got.isEmpty()) {
                    LockSupport.parkNanos(20_000); // leave the cores to the engine while data moves
                }
            }
        }
    }

    /** Child side of the raw TCP measurement: connect, wait for GO, write every stripe, report. */
    private static void rawSend(BufferedReader in, PrintStream out, int port, int sockets, long block, int blocks)
            throws Exception {
        long stripe = stripe(block, sockets);
        SocketChannel[] ch = new SocketChannel[sockets];
        for (int i = 0; i < sockets; i++) {
            ch[i] = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            ch[i].setOption(StandardSocketOptions.TCP_NODELAY, true);
        }
        out.println(TAG + "CONNECTED");
        String go = in.readLine();
        if (!"GO".equals(go)) {
            throw new IllegalStateException("expected GO, got " + go);
        }
        Thread[] writers = new Thread[sockets];
        for (int i = 0; i < sockets; i++) {
            SocketChannel c = ch[i];
            writers[i] = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect((int) Math.min(stripe, 4 << 20));
                try {
                    for (int b = 0; b < blocks; b++) {
                        long left = stripe;
                        while (left > 0) {
                            buf.clear().limit((int) Math.min(left, buf.capacity()));
                            left -= c.write(buf);
                        }
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            writers[i].start();
        }
        for (Thread t : writers) {
            t.join();
        }
        for (SocketChannel c : ch) {
            c.close();
        }
        out.println(TAG + "SENT");
    }

    /** Bytes of one block on one of {@code sockets} sockets (the block split evenly, rounded up). */
    private static long stripe(long block, int sockets) {
        return Math.max(1, (block + sockets - 1) / sockets);
    }

    // ------------------------------------------------------------------ initiator (this process)

    private Process child;
    private BufferedReader fromChild;
    private PrintStream toChild;

    private void initiator() throws Exception {
        startChild();
        DeviceMemory memory = openMemory();
        int gpu = kind() == MemoryKind.VRAM ? integer("gpu") : 0;
        try (GpuNode node = new GpuNode("initiator", memory, gpu, integer("channels"), integer("sockets"),
                integer("io-threads"), (int) parseSize(opts.get("chunk")))) {
            String[] hello = expect("HELLO");
            MemoryDescriptor src = node.allocate(maxSize());
            MemoryDescriptor dst = node.allocate(maxSize());
            node.fillRandom(src, 1);
            node.engine.register(src);
            node.engine.register(dst);
            node.engine.loadPeer("target", unb64(hello[1]));
            node.engine.loadRemoteMetadata("target", unb64(hello[2]));
            node.engine.loadRemoteMetadata("target", unb64(hello[3]));
            MemoryDescriptor remoteSrc = remote(unb64(hello[2]), Long.parseLong(hello[4]));
            MemoryDescriptor remoteDst = remote(unb64(hello[3]), Long.parseLong(hello[5]));
            command("PEER initiator " + b64(node.engine.connInfo()), "OK");
            Session session = node.engine.session("target");
            int round = 0;
            long warmUntil = System.nanoTime() + (long) (Double.parseDouble(opts.get("warmup-seconds")) * 1e9);
            do {
                for (long size : sizes()) {
                    int count = transfersPerRep(size);
                    String name = "r" + round++;
                    command("EXPECT " + name + " " + count, "OK");
                    writeRound(node, session, src.slice(0, size), remoteDst.slice(0, size), count, name);
                    name = "r" + round++;
                    command("EXPECT " + name + " " + count, "OK");
                    readRound(node, session, dst.slice(0, size), remoteSrc.slice(0, size), count, name);
                }
            } while (System.nanoTime() < warmUntil);
            for (long size : sizes()) {
                int count = transfersPerRep(size);
                for (String op : new String[] {"WRITE", "READ"}) {
                    command("POISON", "OK");
                    node.poison(dst, (byte) 0xA5);
                    double[] gbps = new double[integer("reps")];
                    boolean profiled = Boolean.parseBoolean(opts.getOrDefault("profile", "false")) && size == maxSize();
                    ThreadProfile profile = new ThreadProfile();
                    for (int rep = -1; rep < gbps.length; rep++) {
                        if (profiled && rep == 0) {
                            profile.start();
                            command("PROF start", "OK");
                        }
                        String name = "r" + round++;
                        command("EXPECT " + name + " " + count, "OK");
                        long seconds = op.equals("WRITE")
                                ? writeRound(node, session, src.slice(0, size), remoteDst.slice(0, size), count, name)
                                : readRound(node, session, dst.slice(0, size), remoteSrc.slice(0, size), count, name);
                        if (rep >= 0) {
                            gbps[rep] = (double) size * count / seconds;
                        }
                    }
                    if (profiled) {
                        String mine = profile.stop();
                        String theirs = new String(unb64(command("PROF stop", "PROF")[1]), StandardCharsets.UTF_8);
                        System.err.printf("PROFILE %s %s %d B initiator: %s%nPROFILE %s %s %d B target: %s%n",
                                label(), op, size, mine, label(), op, size, theirs);
                    }
                    boolean ok = op.equals("WRITE")
                            ? node.crc(src.slice(0, size)) == Long.parseLong(command("CRC dst " + size, "CRC")[1])
                            : node.crc(dst.slice(0, size)) == Long.parseLong(command("CRC src " + size, "CRC")[1]);
                    report(label(), op, size, count, gbps, ok);
                }
            }
            if (Boolean.parseBoolean(opts.get("raw"))) {
                int sockets = integer("channels") * integer("sockets");
                for (long size : sizes()) {
                    int count = (int) Math.max(8, Math.min(200_000, parseSize(opts.get("bytes-per-rep")) / size));
                    double[] gbps = new double[integer("reps")];
                    for (int rep = -1; rep < gbps.length; rep++) {
                        double g = rawRound(sockets, size, count);
                        if (rep >= 0) {
                            gbps[rep] = g;
                        }
                    }
                    report("raw-tcp-" + sockets, "STREAM", size, count, gbps, true);
                }
            }
            command("QUIT", "BYE");
        } finally {
            if (child.isAlive() && !child.waitFor(10, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
            memory.close();
        }
    }

    /** Transfers of {@code size} in one repetition: about {@code --bytes-per-rep}, 8 to 2000. */
    private int transfersPerRep(long size) {
        return (int) Math.max(8, Math.min(2000, parseSize(opts.get("bytes-per-rep")) / size));
    }

    /** The target's buffer at {@code address}, inside the region a metadata blob describes. */
    private MemoryDescriptor remote(byte[] metadata, long address) {
        MemoryDescriptor region = RegionMetadata.decode(metadata).region();
        MemoryDescriptor d = new MemoryDescriptor(address, maxSize(), region.kind(), region.device());
        if (!region.contains(d.address(), d.length())) {
            throw new IllegalStateException(d + " is not inside the published " + region);
        }
        return d;
    }

    /** Posts {@code count} writes at once; ends when the target reports every notification in. Nanos. */
    private static long writeRound(GpuNode node, Session session, MemoryDescriptor local, MemoryDescriptor remote,
                                   int count, String round) throws InterruptedException {
        byte[] note = round.getBytes(StandardCharsets.UTF_8);
        byte[] done = ("done:" + round).getBytes(StandardCharsets.UTF_8);
        List<Transfer> posted = new ArrayList<>(count);
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            posted.add(session.write(List.of(local), List.of(remote), note));
        }
        long deadline = t0 + TIMEOUT.toNanos();
        boolean acked = false;
        while (!acked) {
            for (Notification n : node.engine.drainNotifications()) {
                acked |= Arrays.equals(n.message(), done);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no acknowledgement of " + round);
            }
            Thread.onSpinWait();
        }
        long t1 = System.nanoTime();
        finish(posted);
        return t1 - t0;
    }

    /** Posts {@code count} reads at once; ends when all are DONE here. Nanos. */
    private static long readRound(GpuNode node, Session session, MemoryDescriptor local, MemoryDescriptor remote,
                                  int count, String round) throws InterruptedException {
        byte[] note = round.getBytes(StandardCharsets.UTF_8);
        List<Transfer> posted = new ArrayList<>(count);
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            posted.add(session.read(List.of(local), List.of(remote), note));
        }
        long deadline = t0 + TIMEOUT.toNanos();
        for (Transfer t : posted) {
            while (!t.status().isTerminal()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("read round " + round + " timed out");
                }
                Thread.onSpinWait();
            }
        }
        long t1 = System.nanoTime();
        finish(posted);
        // the target's notifications are counted there; wait for its echo so rounds do not overlap
        byte[] done = ("done:" + round).getBytes(StandardCharsets.UTF_8);
        boolean acked = false;
        while (!acked) {
            for (Notification n : node.engine.drainNotifications()) {
                acked |= Arrays.equals(n.message(), done);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no acknowledgement of " + round);
            }
            Thread.onSpinWait();
        }
        return t1 - t0;
    }

    private static void finish(List<Transfer> posted) throws InterruptedException {
        for (Transfer t : posted) {
            TransferStatus s = t.await(TIMEOUT);
            if (s != TransferStatus.DONE) {
                throw new IllegalStateException("transfer ended " + s + ": " + t.error());
            }
            t.release();
        }
    }

    /** One raw TCP stream of {@code blocks} blocks striped over {@code sockets} sockets; GB/s. */
    private double rawRound(int sockets, long block, int blocks) throws Exception {
        long stripe = stripe(block, sockets);
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), sockets);
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            toChild.println("RAW " + port + " " + sockets + " " + block + " " + blocks);
            SocketChannel[] ch = new SocketChannel[sockets];
            for (int i = 0; i < sockets; i++) {
                ch[i] = server.accept();
            }
            expect("CONNECTED");
            CountDownLatch done = new CountDownLatch(sockets);
            Thread[] readers = new Thread[sockets];
            for (int i = 0; i < sockets; i++) {
                SocketChannel c = ch[i];
                readers[i] = new Thread(() -> {
                    ByteBuffer buf = ByteBuffer.allocateDirect(4 << 20);
                    long left = stripe * blocks;
                    try {
                        while (left > 0) {
                            buf.clear().limit((int) Math.min(left, buf.capacity()));
                            int n = c.read(buf);
                            if (n < 0) {
                                throw new IOException("EOF with " + left + " bytes to go");
                            }
                            left -= n;
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    } finally {
                        done.countDown();
                    }
                });
                readers[i].start();
            }
            long t0 = System.nanoTime();
            toChild.println("GO");
            if (!done.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("raw TCP round timed out");
            }
            long t1 = System.nanoTime();
            expect("SENT");
            for (SocketChannel c : ch) {
                c.close();
            }
            return (double) stripe * sockets * blocks / (t1 - t0);
        }
    }

    private void report(String system, String op, long size, int count, double[] gbps, boolean verified)
            throws IOException {
        double[] sorted = gbps.clone();
        Arrays.sort(sorted);
        double median = sorted[sorted.length / 2];
        String json = String.format(Locale.ROOT,
                "{\"system\":\"%s\",\"op\":\"%s\",\"kind\":\"%s\",\"bytes\":%d,\"transfers\":%d,\"gbps\":%.3f,"
                        + "\"min_gbps\":%.3f,\"max_gbps\":%.3f,\"avg_us\":%.1f,\"verified\":%b,\"channels\":%d,"
                        + "\"sockets_per_comm\":%d,\"io_threads\":%d,\"chunk\":%d}",
                system, op, kind(), size, count, median, sorted[0], sorted[sorted.length - 1], size / median / 1e3,
                verified, integer("channels"), integer("sockets"), integer("io-threads"), parseSize(opts.get("chunk")));
        System.out.println(json);
        if (opts.containsKey("out")) {
            Files.writeString(Path.of(opts.get("out")), json + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        if (!verified) {
            throw new IllegalStateException("verification failed: " + json);
        }
    }

    // ------------------------------------------------------------------ child process plumbing

    private void startChild() throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(java, "-cp", cp, GpuPairBench.class.getName()));
        for (Map.Entry<String, String> e : opts.entrySet()) {
            if (!e.getKey().equals("role") && !e.getKey().equals("out")) {
                cmd.add("--" + e.getKey());
                cmd.add(e.getValue());
            }
        }
        cmd.add("--role");
        cmd.add("target");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        if (kind() == MemoryKind.VRAM) {
            pb.environment().put("CUDA_VISIBLE_DEVICES", opts.get("peer-gpu"));
        }
        child = pb.start();
        fromChild = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        toChild = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
    }

    /** Sends a command line to the child and waits for its reply starting with {@code reply}. */
    private String[] command(String line, String reply) throws IOException {
        toChild.println(line);
        return expect(reply);
    }

    /** The next protocol line from the child, which must start with {@code word}; split on spaces. */
    private String[] expect(String word) throws IOException {
        String line;
        while ((line = fromChild.readLine()) != null) {
            if (line.startsWith(TAG)) {
                String[] w = line.substring(TAG.length()).split(" ");
                if (!w[0].equals(word)) {
                    throw new IllegalStateException("expected " + word + " from the target, got " + line);
                }
                return w;
            }
            System.err.println("[target stdout] " + line);
        }
        throw new IllegalStateException("the target exited (" + waitExit() + ") before " + word);
    }

    private String waitExit() {
        try {
            return child.waitFor(5, TimeUnit.SECONDS) ? "exit " + child.exitValue() : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    private static byte[] unb64(String s) {
        return Base64.getDecoder().decode(s);
    }
}
