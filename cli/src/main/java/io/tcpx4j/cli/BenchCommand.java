package io.tcpx4j.cli;

import io.tcpx4j.api.ByteSize;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.cli.fleet.FleetOptions;
import io.tcpx4j.api.Progress.Driver;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code tcpx4j bench}: nixlbench-style bandwidth and latency per block size. Without flags: two
 * engines in this JVM over the loopback transport, host memory, WRITE. With {@code --role} one side of
 * a two-host run.
 *
 * <p>Exit codes: 0 done, 1 a transfer or the run failed, 2 bad flags or a capability this build or
 * machine lacks, 3 {@code --check-consistency} found bytes that differ, 130/143 stopped by SIGINT/SIGTERM
 * (after printing the rows finished so far).
 */
@Command(name = "bench", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Measures bandwidth and latency of READ or WRITE transfers per block size, like nixlbench.",
                "Default: two engines in this JVM over the loopback transport, DRAM, WRITE, 4K..64M."},
        footer = {"", "Exit codes: 0 ok, 1 run failed, 2 bad flags or not available, 3 consistency check failed,",
                "130 (SIGINT) or 143 (SIGTERM): stopped early; the rows finished so far are printed."})
final class BenchCommand implements Callable<Integer> {

    static final int EXIT_MISMATCH = 3;
    static final String DEFAULT_BLOCK_SIZES = "4K,16K,64K,256K,1M,4M,16M,64M";
    /** Largest batch: every descriptor becomes one range in a control frame. */
    static final int MAX_BATCH = 4096;
    /** Longest warm-up before the first row. */
    static final int MAX_WARMUP_SECONDS = 600;
    /** Most unmeasured transfers before a row. */
    static final int MAX_WARMUP = 10_000;
    /** Most initiator threads. */
    static final int MAX_THREADS = 64;
    /** Most transfers in flight per initiator thread. */
    static final int MAX_DEPTH = 256;
    /** The warm-up's seconds where {@code --warmup-seconds} is not given. */
    static final double DEFAULT_WARMUP_SECONDS = 1;

    /** What stdout shows. */
    enum Format { TABLE, NIXLBENCH, CSV, JSON }

    enum Role { INITIATOR, TARGET }

    private final Io io;
    private final GpuHost gpus;

    @Spec
    CommandSpec spec;

    @Mixin
    EngineOptions engine;

    @Mixin
    OobOptions oob;

    @Mixin
    FleetOptions fleet;

    @Mixin
    DeviceOptions devices;

    @Option(names = "--op", paramLabel = "read|write", defaultValue = "write",
            description = "write: the initiator pushes into the target; read: it pulls. Default: ${DEFAULT-VALUE}.")
    BenchSettings.Op op;

    @Option(names = "--block-sizes", paramLabel = "SIZE[,SIZE...]", split = ",", defaultValue = DEFAULT_BLOCK_SIZES,
            converter = Sizes.Converter.class,
            description = "Bytes per descriptor, K/M/G suffixes (binary). Default: ${DEFAULT-VALUE}.")
    List<Long> blockSizes;

    @Option(names = "--batch-sizes", paramLabel = "N[,N...]", split = ",", defaultValue = "1",
            description = "Descriptors per transfer, 1.." + MAX_BATCH + ". Default: ${DEFAULT-VALUE}.")
    List<Integer> batchSizes;

    @Option(names = "--iterations", paramLabel = "N",
            description = "Measured transfers per row. Default: 512 MiB worth per row, 8..2000.")
    Integer iterations;

    @Option(names = "--warmup", paramLabel = "N",
            description = "Unmeasured transfers before each row, 0.." + MAX_WARMUP + ". Default: a tenth of the"
                    + " iterations, 2..100.")
    Integer warmup;

    @Option(names = "--warmup-seconds", paramLabel = "S",
            description = "Before the first row, unmeasured transfers of every row's shape, each for an equal share"
                    + " of S seconds, then more rounds over the shapes until the JVM has compiled nothing new for"
                    + " 0.3 s (at most 10 x S in all), so that no row is measured while the JVM compiles;"
                    + " 0: none. Default: 1, and the warm-up ends once it has made "
                    + BenchSettings.WARMUP_PER_MEASURED + " times the transfers the run measures (a short run"
                    + " starts at once).")
    Double warmupSeconds;

    @Option(names = {"--num-threads", "--num_threads"}, paramLabel = "N", defaultValue = "1",
            description = "Initiator threads, 1.." + MAX_THREADS + ", sharing the row's iterations and posting"
                    + " transfers at the same time, each on slices of the buffers of its own. Default:"
                    + " ${DEFAULT-VALUE}.")
    int threads;

    @Option(names = {"--pipeline-depth", "--pipeline_depth"}, paramLabel = "N", defaultValue = "1",
            description = "Transfers each initiator thread keeps in flight, 1.." + MAX_DEPTH + ", each a whole batch"
                    + " on a slice of the buffers of its own. Default: ${DEFAULT-VALUE} (each transfer waited for"
                    + " before the next).")
    int depth;

    @Option(names = {"--initiator-seg-type", "--initiator_seg_type"}, paramLabel = "DRAM|VRAM",
            description = "Memory of the initiator's buffer. Default: --mem.")
    io.tcpx4j.api.MemoryKind initiatorSegType;

    @Option(names = {"--target-seg-type", "--target_seg_type"}, paramLabel = "DRAM|VRAM",
            description = "Memory of the target's buffer (on an initiator: what it asks the target for). Default:"
                    + " --mem.")
    io.tcpx4j.api.MemoryKind targetSegType;

    @Option(names = "--check-consistency",
            description = "Fill the source with pseudo-random data and check every destination byte after each row;"
                    + " exit 3 if any differs.")
    boolean checkConsistency;

    @Option(names = "--format", paramLabel = "table|nixlbench|csv|json", converter = Choices.Format.class,
            description = "stdout: table (tcpx4j's columns), nixlbench (nixlbench's ten columns in its order and"
                    + " format), csv (a header, then one line per row) or json (one document at the end). Default:"
                    + " table.")
    Format format;

    @Option(names = "--json", description = "The same as --format json.")
    boolean json;

    @Option(names = "--csv", description = "The same as --format csv.")
    boolean csv;

    @Option(names = "--report-interval", paramLabel = "DURATION", defaultValue = "5s",
            converter = Durations.Converter.class,
            description = "When stderr is not a terminal: one progress line per DURATION while the run goes on (on a"
                    + " terminal a bar). Default: ${DEFAULT-VALUE}.")
    Duration reportInterval;

    @Option(names = "--baseline", negatable = true, fallbackValue = "true",
            description = "After each row, move the same transfers as raw TCP over the same number of sockets"
                    + " (embedded: on 127.0.0.1; initiator: to readers the target opens on its host) and add Raw"
                    + " B/W, Raw Lat. and x Raw B/W columns; --no-baseline skips it. Default: on, except with"
                    + " --format nixlbench (which has no such columns).")
    Boolean baseline;

    /** Where the descriptors of a batch lie in the buffers. */
    enum Layout { ADJACENT, REVERSED }

    @Option(names = "--layout", paramLabel = "adjacent|reversed", defaultValue = "adjacent",
            converter = Choices.Layout.class,
            description = "Descriptors of a batch: adjacent (descriptor i is block i of the buffer on both sides) or"
                    + " reversed (block batch-1-i: no descriptor follows its predecessor in memory, as KV-cache"
                    + " blocks that are not adjacent). Default: ${DEFAULT-VALUE}.")
    Layout layout;

    @Option(names = "--progress", paramLabel = "thread|caller", defaultValue = "thread",
            converter = Choices.Progress.class,
            description = "Who drives the initiator's engine: thread (its own thread; the bench thread blocks until"
                    + " each transfer ends) or caller (the bench threads drive it while they wait, as a NIXL host"
                    + " that polls checkXfer). Targets are always driven by their own thread. Default:"
                    + " ${DEFAULT-VALUE}.")
    Driver progressMode;

    @Option(names = "--busy", paramLabel = "N", defaultValue = "0",
            description = "Start N busy-loop processes (0.." + BusyLoops.MAX + ") for the run, each keeping a CPU busy"
                    + " as other work on a shared host does; they inherit this process's CPU affinity (under"
                    + " taskset they compete for the bench's CPUs) and are stopped when the run ends, fails or is"
                    + " interrupted. Default: ${DEFAULT-VALUE}.")
    int busy;

    @Option(names = "--role", paramLabel = "initiator|target",
            description = "Two-host mode: this side's role. Without it both engines run in this JVM.")
    Role role;

    @Option(names = "--listen", paramLabel = "HOST:PORT", converter = HostPort.Converter.class,
            description = "Target: out-of-band address initiators connect to. Default: 127.0.0.1:" + ServeCommand.DEFAULT_PORT + ".")
    HostPort listen;

    @Option(names = "--peer", paramLabel = "HOST:PORT", converter = HostPort.Converter.class,
            description = "Initiator: the target's --listen address.")
    HostPort peer;

    @Option(names = "--peer-wait", paramLabel = "SECONDS", defaultValue = "30",
            description = "Initiator: how long to keep trying --peer while the target starts, is full, or drops the"
                    + " connection before its welcome; fleet run: how long to wait for all workers to join."
                    + " Default: ${DEFAULT-VALUE}.")
    int peerWait;

    /** Set by tests: a progress bar to use instead of the console one. */
    Progress progressOverride;

    /** The channels the connection runs on, once the target is known; 0 before. */
    private int agreedChannels;
    /** The GPUs of a remote target's buffers, once it welcomed the run; null before or for host memory. */
    private List<Integer> remoteTargetDevices;
    /** What {@code --role target} offers its run, from {@link #settings()}. */
    private TargetServer.Offer offer = TargetServer.Offer.HOST;

    /** Prints each finished row (table output); a no-op for --json. */
    private java.util.function.Consumer<BenchRow> onRow = r -> { };

    /** The runner of the rows in progress, for {@link #interrupt}; null before and after. */
    private volatile BenchRunner runner;
    /** The exit code of the signal that stopped the run, or 0. */
    private volatile int stoppedBy;
    /** The busy loops of the run in progress ({@code --busy}). */
    private BusyLoops loops;

    /** @param gpus this host's GPUs ({@link Backends#CUDA}; tests substitute a double) */
    BenchCommand(Io io, GpuHost gpus) {
        this.io = io;
        this.gpus = gpus;
    }

    @Override
    public Integer call() throws Exception {
        Logs.configure(engine.verbose, io.err());
        BenchSettings settings = settings();
        if (role != Role.TARGET) {
            Backends.checkAvailable(settings.transport(), settings.initiatorMemory(), gpus);
        }
        if (role != Role.INITIATOR) {
            Backends.checkAvailable(settings.transport(), settings.targetMemory(), gpus);
        }
        if (role != Role.TARGET) {
            checkHostMemory(settings);
        }
        try (BusyLoops started = BusyLoops.start(busy, engine.procfs)) {
            loops = started;
            return role == Role.TARGET ? runTarget(settings) : runBench(settings);
        } finally {
            loops = null;
        }
    }

    /** An embedded or initiator run: prints the table or the JSON document; the exit code. */
    private int runBench(BenchSettings settings) throws Exception {
        if (Main.ownsProcess) {
            Signals.onInterrupt(this::interrupt);
        }
        Progress progress = progressOverride != null ? progressOverride
                : Progress.forConsole(io.err(), reportInterval.toNanos());
        Format shown = format();
        RowFormat rowFormat = switch (shown) {
            case TABLE -> new BenchTable(settings.checkConsistency(), baseline());
            case NIXLBENCH -> new NixlbenchTable(settings.threads());
            case CSV -> new BenchCsv(settings.checkConsistency(), baseline());
            case JSON -> null;
        };
        // the header prints with the first row: a run that fails before any row prints its error alone
        Runnable header = new Runnable() {
            private boolean printed;

            @Override
            public void run() {
                if (!printed) {
                    printed = true;
                    if (shown != Format.CSV) {
                        io.out().println(new BenchReport(Main.version(), reportSettings(settings), List.of()).header());
                    }
                    io.out().print(rowFormat.head());
                }
            }
        };
        if (rowFormat != null) {
            onRow = r -> {
                progress.finish();
                header.run();
                io.out().print(rowFormat.line(r));
                io.out().flush();
            };
        }
        List<BenchRow> rows;
        // without -v a failed run says why in one line; the engine's warnings on the way would repeat it
        Logs.Held warnings = engine.verbose ? null : Logs.hold();
        try {
            if (fleet.enabled()) {
                rows = FleetBench.run(settings, engine, gpus, fleet, peerWait, onRow, () -> stoppedBy != 0, io.err());
            } else if (role == Role.INITIATOR) {
                rows = runInitiator(settings, progress);
            } else {
                rows = runEmbedded(settings, progress);
            }
        } catch (Exception | Error e) {
            if (warnings != null) {
                warnings.discard();
            }
            throw e;
        }
        if (warnings != null) {
            warnings.release();
        }
        int signal = stoppedBy;
        BenchReport report = new BenchReport(Main.version(), reportSettings(settings), rows,
                signal != 0 ? Boolean.TRUE : null);
        if (rowFormat == null) {
            io.out().println(report.toJson());
        } else {
            header.run();
            io.out().print(rowFormat.tail());
        }
        io.out().flush();
        if (signal != 0) {
            int all = settings.blockSizes().size() * settings.batchSizes().size();
            io.err().println("tcpx4j: bench interrupted: " + rows.size() + " of " + all + " rows finished");
            io.err().flush();
            return signal;
        }
        Long bad = report.mismatches();
        if (bad != null && bad > 0) {
            io.err().println("tcpx4j: consistency check FAILED: " + bad + " destination bytes differ from the source");
            return EXIT_MISMATCH;
        }
        return 0;
    }

    private BenchReport.Settings reportSettings(BenchSettings settings) {
        BenchReport.Settings s = BenchReport.Settings.of(settings, peer == null ? null : peer.toString())
                .withBusy(loops.count(), loops.cpus())
                .withIoThreads(engine.transport == TransportKind.LOOPBACK ? engine.ioThreads() : null);
        if (remoteTargetDevices != null) {
            s = s.withTargetDevices(remoteTargetDevices);
        }
        return agreedChannels > 0 ? s.withChannels(agreedChannels) : s;
    }

    /** What stdout shows: --format, or --json / --csv. */
    private Format format() {
        if (json) {
            return Format.JSON;
        }
        if (csv) {
            return Format.CSV;
        }
        return format != null ? format : Format.TABLE;
    }

    /**
     * Whether rows get the raw baseline: never in a fleet run (its workers have no socket pair to time), else
     * --baseline, else on except for nixlbench's columns.
     */
    private boolean baseline() {
        if (fleet.enabled()) {
            return false;
        }
        return baseline != null ? baseline : format() != Format.NIXLBENCH;
    }

    /**
     * What SIGINT and SIGTERM do during a run: the first ends it after the transfer in progress (the
     * rows finished so far are printed, then the command exits {@code exitCode}); a second one exits at
     * once.
     */
    void interrupt(int exitCode) {
        if (stoppedBy != 0) {
            new Thread(() -> System.exit(exitCode), "tcpx4j-bench-exit").start();
            return;
        }
        stoppedBy = exitCode;
        BenchRunner r = runner;
        if (r != null) {
            r.stop();
        }
    }

    /** DRAM runs: fails with one line (exit 2) before allocating more host memory than is available. */
    private void checkHostMemory(BenchSettings s) {
        boolean embedded = role == null && !fleet.enabled();
        int hostBuffers = (s.initiatorMemory() == MemoryKind.DRAM ? 1 : 0)
                + (embedded && s.targetMemory() == MemoryKind.DRAM ? 1 : 0);
        if (hostBuffers == 0) {
            return;
        }
        long need = hostBuffers * s.bufferBytes();
        String what = "--block-sizes " + ByteSize.format(s.blockSizes().stream().mapToLong(Long::longValue).max().orElse(0))
                + " x --batch-sizes " + s.batchSizes().stream().mapToInt(Integer::intValue).max().orElse(0)
                + (s.slots() > 1 ? " x " + s.slots() + " transfer slots (--num-threads x --pipeline-depth)" : "")
                + (hostBuffers > 1 ? " (both engines in this process)" : "");
        String shortage = HostRam.shortage(need, engine.procfs, what);
        if (shortage != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), shortage);
        }
    }

    private List<BenchRow> run(BenchSettings s, Node initiator, TargetHandle handle, Progress progress)
            throws InterruptedException {
        RawBaseline raw = null;
        try {
            Integer offered = handle.channels();
            agreedChannels = offered == null ? s.channels() : Math.min(s.channels(), offered);
            if (s.mode() == BenchSettings.Mode.INITIATOR && s.targetMemory() == MemoryKind.VRAM) {
                remoteTargetDevices = handle.buffers().buffers().stream().map(b -> b.device()).toList();
            }
            if (baseline()) {
                raw = handle.rawBaseline(baselineSockets(s), s.chunkSize());
            }
            BenchRunner r = new BenchRunner(s, initiator, handle, progress, raw, onRow);
            runner = r;
            if (stoppedBy != 0) {
                r.stop();
            }
            return r.run();
        } catch (IOException e) {
            throw new TransferException(TransferException.Code.BACKEND, "cannot open the raw TCP baseline: "
                    + e.getMessage(), e);
        } finally {
            runner = null;
            if (raw != null) {
                raw.close();
            }
        }
    }

    /** The engine's socket count: channels times the loopback transport's sockets per comm. */
    private static int baselineSockets(BenchSettings s) {
        int perComm = s.transport() == TransportKind.LOOPBACK
                ? Backends.loopbackConfig("127.0.0.1").socketsPerComm() : 1;
        return s.channels() * perComm;
    }

    /** Validates flags and applies defaults. */
    BenchSettings settings() {
        String problem = engine.problem();
        if (problem == null) {
            problem = flagProblem();
        }
        if (problem != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), problem);
        }
        BenchSettings.Mode mode = fleet.enabled() ? BenchSettings.Mode.FLEET : role == null ? BenchSettings.Mode.EMBEDDED
                : role == Role.INITIATOR ? BenchSettings.Mode.INITIATOR : BenchSettings.Mode.TARGET;
        MemoryKind initiatorMemory = initiatorSegType != null ? initiatorSegType : engine.memory;
        MemoryKind targetMemory = targetSegType != null ? targetSegType : engine.memory;
        DeviceOptions.Resolved gpu = devices(mode, initiatorMemory, targetMemory);
        if (mode == BenchSettings.Mode.TARGET && targetMemory == MemoryKind.VRAM) {
            offer = new TargetServer.Offer(gpu.target(), gpu.targetRequired());
        }
        return new BenchSettings(engine.transport, mode, op, initiatorMemory, targetMemory, blockSizes, batchSizes,
                iterations == null ? 0 : iterations, warmup == null ? -1 : warmup,
                warmupSeconds != null ? warmupSeconds : DEFAULT_WARMUP_SECONDS, warmupSeconds == null,
                checkConsistency, engine.channels, (int) engine.chunkSize, engine.bind,
                progressMode == Driver.CALLER, layout == Layout.REVERSED, threads, depth, gpu.initiator(),
                mode == BenchSettings.Mode.TARGET ? List.of() : gpu.target(), gpu.targetCount());
    }

    /** The GPUs of each side ({@link DeviceOptions}); a bad device flag is a bad flag (exit 2). */
    private DeviceOptions.Resolved devices(BenchSettings.Mode mode, MemoryKind initiatorMemory,
                                           MemoryKind targetMemory) {
        int minBatch = batchSizes.stream().mapToInt(Integer::intValue).min().orElse(1);
        DeviceOptions.Run run = mode == BenchSettings.Mode.FLEET
                ? new DeviceOptions.Run(mode, initiatorMemory, targetMemory, minBatch, fleet.fewestPeers(true),
                        fleet.fewestPeers(false), "target", "initiator")
                : new DeviceOptions.Run(mode, initiatorMemory, targetMemory, minBatch, threads * depth,
                        threads * depth, "transfer slot", "transfer slot");
        try {
            return devices.resolve(run, gpus);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private String flagProblem() {
        for (int b : batchSizes) {
            if (b < 1 || b > MAX_BATCH) {
                return "--batch-sizes must be 1.." + MAX_BATCH + ", was " + b;
            }
        }
        if (iterations != null && iterations < 1) {
            return "--iterations must be at least 1, was " + iterations;
        }
        if (warmup != null && (warmup < 0 || warmup > MAX_WARMUP)) {
            return "--warmup must be 0.." + MAX_WARMUP + ", was " + warmup;
        }
        if (warmupSeconds != null && !(warmupSeconds >= 0 && warmupSeconds <= MAX_WARMUP_SECONDS)) {
            return "--warmup-seconds must be 0.." + MAX_WARMUP_SECONDS + ", was " + warmupSeconds;
        }
        if (threads < 1 || threads > MAX_THREADS) {
            return "--num-threads must be 1.." + MAX_THREADS + ", was " + threads;
        }
        if (depth < 1 || depth > MAX_DEPTH) {
            return "--pipeline-depth must be 1.." + MAX_DEPTH + ", was " + depth;
        }
        long block = blockSizes.stream().mapToLong(Long::longValue).max().orElse(0);
        int batch = batchSizes.stream().mapToInt(Integer::intValue).max().orElse(0);
        if (block > TargetServer.MAX_BUFFER / batch / ((long) threads * depth)) {
            return "largest block size x largest batch size" + (threads * depth > 1 ? " x --num-threads x"
                    + " --pipeline-depth" : "") + " must be at most " + ByteSize.format(TargetServer.MAX_BUFFER);
        }
        int formats = (json ? 1 : 0) + (csv ? 1 : 0) + (format != null ? 1 : 0);
        if (formats > 1) {
            return "--format, --json and --csv each choose what stdout shows: give one of them";
        }
        if (busy < 0 || busy > BusyLoops.MAX) {
            return "--busy must be 0.." + BusyLoops.MAX + ", was " + busy;
        }
        String fleetProblem = fleet.problem(role != null || peer != null || listen != null);
        if (fleetProblem != null) {
            return fleetProblem;
        }
        if (fleet.enabled() && (initiatorSegType != null || targetSegType != null)) {
            return "--initiator-seg-type and --target-seg-type are for one initiator and one target: a fleet worker"
                    + " is both, with the memory of --mem";
        }
        if (peerWait < 0) {
            return "--peer-wait must be at least 0 seconds, was " + peerWait;
        }
        if (role == null && (peer != null || listen != null)) {
            return (peer != null ? "--peer" : "--listen") + " is for two-host runs: add --role "
                    + (peer != null ? "initiator" : "target");
        }
        if (role == Role.INITIATOR && peer == null) {
            return "--role initiator needs --peer HOST:PORT (the target's --listen address)";
        }
        if (role == Role.INITIATOR && listen != null) {
            return "--listen is for --role target; the initiator connects to --peer";
        }
        if (role == Role.TARGET && peer != null) {
            return "--peer is for --role initiator; the target waits on --listen";
        }
        return null;
    }

    private List<BenchRow> runEmbedded(BenchSettings s, Progress progress) throws InterruptedException {
        String bind = s.bindHost() != null ? s.bindHost() : "127.0.0.1";
        try (Node target = Node.start(engine.engineConfig("bench-target", bind),
                spec(s.targetMemory(), bind, s.targetDevices()));
             Node initiator = Node.start(engine.engineConfig("bench-initiator", bind, progressMode),
                     spec(s.initiatorMemory(), bind, s.initiatorDevices()));
             TargetHandle handle = new TargetHandle.Local(target, s.targetDevices(), s.targetBufferBytes())) {
            return run(s, initiator, handle, progress);
        }
    }

    private List<BenchRow> runInitiator(BenchSettings s, Progress progress) throws IOException, InterruptedException {
        try (TargetDial dial = new TargetDial(peer, Duration.ofSeconds(peerWait), io.err())) {
            // the engine starts before the out-of-band connection, so that the hello follows the connection at once
            String bind = s.bindHost() != null ? s.bindHost() : dial.localAddress().getHostAddress();
            String name = "bench-initiator-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
            try (Node initiator = Node.start(engine.engineConfig(name, bind, progressMode),
                    spec(s.initiatorMemory(), bind, s.initiatorDevices()));
                 OobClient handle = dial.open(name, initiator.engine().connInfo(), s.targetBufferBytes(),
                         s.targetMemory().name().toLowerCase(java.util.Locale.ROOT), s.transport().label(),
                         oob.timeout, oob.pingInterval(), s.targetDeviceCount())) {
                try {
                    return run(s, initiator, handle, progress);
                } catch (RuntimeException e) {
                    String why = handle.endedBecause();
                    if (why == null) {
                        throw e;
                    }
                    // the target gave up on the run: that is the cause, whatever failed here after it
                    throw new IOException("bench target " + handle.remote() + " ended the run: " + why
                            + " (then here: " + Main.oneLine(String.valueOf(e.getMessage())) + ")", e);
                }
            }
        }
    }

    private int runTarget(BenchSettings s) throws IOException {
        HostPort at = listen != null ? listen : new HostPort("127.0.0.1", ServeCommand.DEFAULT_PORT);
        String bind = targetBind(s.bindHost(), at, engine.advertise, spec.commandLine());
        // the listener first: a bad --listen is named as given, before an engine starts on its host
        java.nio.channels.ServerSocketChannel socket = TargetServer.bind(at);
        Node node;
        try {
            node = Node.start(engine.engineConfig("bench-target", bind), spec(s.targetMemory(), bind, offer.gpus()));
        } catch (RuntimeException | Error e) {
            socket.close();
            throw e;
        }
        try (node; TargetServer server = new TargetServer(node, offer, s.transport(), socket, oob, engine.procfs,
                io.err())) {
            if (loops.count() > 0) {
                io.out().println("tcpx4j bench target: " + loops.describe());
            }
            io.out().println("tcpx4j bench target: waiting for one initiator on " + HostPort.of(server.address()));
            io.out().flush();
            server.serve(1);
            // the run's failure is on stderr already, one line, from the server
            return server.failedRuns() > 0 ? Main.EXIT_FAILURE : 0;
        }
    }

    /**
     * What one of this run's engines runs on: the transport and memory of its side, with the unpack kernel on
     * the first GPU of its buffers.
     */
    private Backends.Spec spec(MemoryKind memory, String bind, List<Integer> gpus) {
        return engine.spec(bind, memory, this.gpus, gpus.isEmpty() ? 0 : gpus.get(0));
    }

    /**
     * The engine interface of a target: --bind, else the --listen host, else (a wildcard --listen)
     * the --advertise host. A wildcard --listen without either is refused: the engine's conn-info
     * carries one address, and the host's own name may resolve to a loopback address that
     * initiators on other hosts cannot reach.
     */
    static String targetBind(String bind, HostPort listen, String advertise, CommandLine commandLine)
            throws IOException {
        if (bind != null) {
            return bind;
        }
        InetAddress a;
        try {
            a = InetAddress.getByName(listen.host());
        } catch (java.net.UnknownHostException e) {
            throw new java.net.UnknownHostException("could not resolve " + listen.host() + ", the host of --listen "
                    + listen + " (no such host name, or no name service here)");
        }
        if (!a.isAnyLocalAddress()) {
            return listen.host();
        }
        if (advertise == null) {
            throw new CommandLine.ParameterException(commandLine, "--listen " + listen + " is every interface,"
                    + " and initiators need one address to reach this engine at: add --advertise HOST (this"
                    + " host's address on their network) or --bind HOST");
        }
        return advertise;
    }
}
