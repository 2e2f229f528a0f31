package io.tcpx4j.cli;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.PeerStats;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code tcpx4j serve}: a long-running bench target. Serves initiator runs ({@code bench --role
 * initiator --peer HOST:PORT}) one after another until SIGINT or SIGTERM, then closes the listener,
 * the run in progress, the engine and the transport, and exits 0.
 *
 * <p>Thread-safe for {@link #shutdown()}.
 */
@Command(name = "serve", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Serves two-host bench runs as their target until interrupted (Ctrl-C).",
                "Initiators run: tcpx4j bench --role initiator --peer HOST:PORT",
                "Runs are served one at a time; an initiator that comes during a run is told to wait."},
        footer = {"", "Exit codes: 0 stopped by SIGINT/SIGTERM, 1 cannot listen or the engine failed,"
                + " 2 bad flags or not available."})
final class ServeCommand implements Callable<Integer> {

    static final int DEFAULT_PORT = 7117;

    private final Io io;
    private final GpuHost gpus;
    private final CountDownLatch ready = new CountDownLatch(1);
    private volatile TargetServer server;
    private volatile boolean stopRequested;

    @Spec
    CommandSpec spec;

    @Mixin
    EngineOptions engine;

    @Mixin
    OobOptions oob;

    @Option(names = "--listen", paramLabel = "HOST:PORT", converter = HostPort.Converter.class,
            defaultValue = "127.0.0.1:" + DEFAULT_PORT,
            description = "Out-of-band address initiators connect to (plain TCP; it hands out the engine's"
                    + " connection secret, so use a trusted network). Default: ${DEFAULT-VALUE}.")
    HostPort listen;

    @Option(names = {"--device-list", "--device_list"}, paramLabel = "N[,N...]|all",
            description = "With --mem vram: the CUDA device ordinals runs may spread their buffers over, in order; a"
                    + " run whose initiator asks for n GPUs (--num-target-dev) takes the first n. Default: all.")
    String deviceList;

    /** Tests call {@link #shutdown()} themselves and keep the test JVM's signal handling. */
    boolean installSignalHandlers = true;

    /** @param gpus this host's GPUs ({@link Backends#CUDA}; tests substitute a double) */
    ServeCommand(Io io, GpuHost gpus) {
        this.io = io;
        this.gpus = gpus;
    }

    @Override
    public Integer call() throws Exception {
        Logs.configure(engine.verbose, io.err());
        // a server warms up before it reports ready: its first requests must not wait for the JIT
        engine.defaultWarmUp = EngineConfig.DEFAULT_WARM_UP_TRANSFERS;
        String problem = engine.problem();
        if (problem != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), problem);
        }
        TargetServer.Offer offer = offer();
        Backends.checkAvailable(engine.transport, engine.memory, gpus);
        String bind = BenchCommand.targetBind(engine.bind, listen, engine.advertise, spec.commandLine());
        Thread hook = new Thread(this::shutdown, "tcpx4j-serve-shutdown");
        // the listener first: a bad --listen is named as given, before an engine starts on its host
        java.nio.channels.ServerSocketChannel socket = TargetServer.bind(listen);
        try (Node node = startNode(socket, bind, offer);
             TargetServer s = new TargetServer(node, offer, engine.transport, socket, oob, engine.procfs, io.err())) {
            server = s;
            if (installSignalHandlers) {
                Runtime.getRuntime().addShutdownHook(hook);
                Signals.onInterrupt(this::shutdown);
            }
            if (stopRequested) {
                s.close();
            }
            io.out().println("tcpx4j serve: " + engine.transport.label() + " target on " + HostPort.of(s.address())
                    + " (engine on " + bind
                    + (engine.advertise != null && !engine.advertise.equals(bind) ? ", advertised as " + engine.advertise : "")
                    + (engine.agents > 1 ? ", " + engine.agents + " progress agents" : "")
                    + (offer.gpus().isEmpty() ? "" : ", " + (offer.gpus().size() == 1 ? "GPU " : "GPUs ")
                    + DeviceList.join(offer.gpus())) + "); Ctrl-C stops");
            java.net.InetSocketAddress metricsAt = engine.metrics() == null ? null : engine.metrics().address();
            if (metricsAt != null) {
                io.out().println("tcpx4j serve: metrics on http://" + HostPort.of(metricsAt) + "/metrics");
            }
            io.out().flush();
            ready.countDown();
            int runs = s.serve(0);
            io.err().println("tcpx4j serve: stopped after " + runs + " run(s)");
        } finally {
            ready.countDown();
            if (installSignalHandlers) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException alreadyShuttingDown) {
                    // the hook is running or has run: it only stops the server, which is closed
                }
            }
        }
        return 0;
    }

    /** The GPUs runs may spread over ({@code --device-list}); none for host memory. */
    private TargetServer.Offer offer() {
        if (engine.memory == MemoryKind.DRAM && deviceList == null) {
            return TargetServer.Offer.HOST;
        }
        DeviceOptions d = new DeviceOptions();
        d.deviceList = deviceList;
        try {
            DeviceOptions.Resolved r = d.resolve(new DeviceOptions.Run(BenchSettings.Mode.TARGET, engine.memory,
                    engine.memory, 1, 1, 1, "transfer slot", "transfer slot"), gpus);
            return new TargetServer.Offer(r.target(), null);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private Node startNode(java.nio.channels.ServerSocketChannel socket, String bind, TargetServer.Offer offer)
            throws java.io.IOException {
        try {
            return Node.start(engine.engineConfig("bench-target", bind), engine.spec(bind, engine.memory, gpus,
                    offer.gpus().isEmpty() ? 0 : offer.gpus().get(0)));
        } catch (RuntimeException | Error e) {
            socket.close();
            throw e;
        }
    }

    /**
     * Stops serving; {@link #call()} then closes everything and returns 0. What SIGINT and SIGTERM
     * do. Idempotent, callable from any thread.
     */
    void shutdown() {
        stopRequested = true;
        TargetServer s = server;
        if (s != null) {
            s.close();
        }
    }

    /** Waits until the server listens (or failed to start). Returns false on timeout. */
    boolean awaitReady(long timeout, TimeUnit unit) throws InterruptedException {
        return ready.await(timeout, unit);
    }

    /** Where --metrics-port serves once listening, else null. */
    java.net.InetSocketAddress metricsAddress() {
        return server == null || engine.metrics() == null ? null : engine.metrics().address();
    }

    /** The peers the serving engine knows now (none before it listens). */
    List<PeerStats> peers() {
        TargetServer s = server;
        return s == null ? List.of() : s.peers();
    }

    /** The out-of-band address once listening, else null. */
    HostPort address() {
        TargetServer s = server;
        return s == null ? null : HostPort.of(s.address());
    }
}
