package io.tcpx4j.cli;

import io.tcpx4j.api.ByteSize;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Progress;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;

/** Flags shared by {@code bench} and {@code serve}: what the local engine runs on. */
final class EngineOptions {

    /**
     * Smallest --chunk-size: one 4 KiB page, the unit TCPX receives in. The engine takes any size from
     * 1 byte, but every chunk costs a header, a post and a completion, so that smaller chunks only
     * multiply the work per byte (and the chunks a stop has to wait for).
     */
    static final long MIN_CHUNK = 4096;

    @Option(names = "--transport", paramLabel = "loopback|tcpx", defaultValue = "loopback",
            description = "Transport: loopback (kernel TCP, works anywhere) or tcpx (GPUDirect-TCPX). Default: ${DEFAULT-VALUE}.")
    TransportKind transport;

    @Option(names = "--mem", paramLabel = "dram|vram", defaultValue = "dram",
            description = "Memory of the buffers on both sides: dram (host) or vram (GPU memory: GPU 0, or"
                    + " --device-list). Default: ${DEFAULT-VALUE}.")
    MemoryKind memory;

    @Option(names = "--channels", paramLabel = "N", defaultValue = "2",
            description = "Data channels per connection, 1..64. Default: ${DEFAULT-VALUE}.")
    int channels;

    @Option(names = "--chunk-size", paramLabel = "SIZE", defaultValue = "512K", converter = Sizes.Converter.class,
            description = "Bytes per chunk on the wire, 4K..4M (TCPX holds at most 2048 4-KiB pages per receive); a transfer whose chunks would load one channel more than another goes in equal chunks, a whole number per channel, each at least 128K, when no other chunk waits. Default: ${DEFAULT-VALUE}.")
    long chunkSize;

    @Option(names = "--inline-limit", paramLabel = "SIZE", defaultValue = "32K", converter = Sizes.OrZeroConverter.class,
            description = "A transfer of at most this many bytes, host memory on both sides, travels inside its"
                    + " control frame (one round trip, no data channel); 0 never, at most 1M. Default: ${DEFAULT-VALUE}.")
    long inlineLimit;

    @Option(names = "--coalesce-limit", paramLabel = "SIZE", defaultValue = "32K", converter = Sizes.OrZeroConverter.class,
            description = "Descriptors of host memory of at most this many bytes travel packed with their"
                    + " neighbours in shared chunks of up to 128K (copied by the CPU through staging buffers unless"
                    + " they lie back to back); 0 never, at most 4M. Default: ${DEFAULT-VALUE}.")
    long coalesceLimit;

    @Option(names = "--device-coalesce-limit", paramLabel = "SIZE", defaultValue = "128K",
            converter = Sizes.OrZeroConverter.class,
            description = "The same for device memory on both sides, in shared chunks of up to 512K gathered and"
                    + " scattered by the unpack kernel; between host and device memory the host limit holds."
                    + " 0 never, at most 4M. Default: ${DEFAULT-VALUE}.")
    long deviceCoalesceLimit;

    @Option(names = "--agents", paramLabel = "N", defaultValue = "1",
            description = "Progress agents of each engine, 1..64: threads that each serve the peers whose names"
                    + " hash to them, through a control port of their own; a target that many initiators write"
                    + " into spreads them over several. Default: ${DEFAULT-VALUE}.")
    int agents;

    @Option(names = "--io-threads", paramLabel = "N",
            description = "Loopback transport: threads per engine that move the data sockets' bytes, 0..16. 0: none,"
                    + " the engine's progress driver moves them inside its own cycles and the kernel wakes it for"
                    + " them (fewest hand-offs between threads: for hosts whose CPUs are shared, and with --progress"
                    + " caller); more: copies overlap on dedicated CPUs. Default: 2.")
    Integer ioThreads;

    @Option(names = "--spin", paramLabel = "TIME", defaultValue = "50us", converter = Durations.SpinConverter.class,
            description = "How long an engine's progress driver spins after finding nothing to do before it blocks"
                    + " until the kernel reports an event (or, while a TCPX request is out, polls in short parks):"
                    + " 0 blocks at once; at most 1s; e.g. 20us, 1ms. Default: ${DEFAULT-VALUE}.")
    Duration spin;

    @Option(names = "--warm-up", paramLabel = "N",
            description = "Transfers the engine runs between two private engines of its own when it starts, before"
                    + " it serves or benches, so the JIT has compiled the transfer paths before the first real"
                    + " transfer; 0 none, at most 1000000. Default: " + EngineConfig.DEFAULT_WARM_UP_TRANSFERS + " for serve,"
                    + " 0 for bench (which warms up each row itself: --warmup, --warmup-seconds).")
    Integer warmUp;

    /** The warm-up when --warm-up is not given: serve's differs from bench's (see the option's description). */
    int defaultWarmUp;

    @Option(names = "--bind", paramLabel = "HOST",
            description = "Interface of this engine's listeners (loopback transport). Default: 127.0.0.1 embedded;"
                    + " the --listen host on a target; the interface that reaches --peer on an initiator.")
    String bind;

    @Option(names = "--advertise", paramLabel = "HOST",
            description = "Target: the address initiators reach this engine at, written into its conn-info; with a"
                    + " wildcard --listen (0.0.0.0, ::) and no --bind also the interface the engine listens on."
                    + " A wildcard --listen needs it (or --bind). Default: the engine's interface.")
    String advertise;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Serve this command's engine and transport meters as Prometheus text at"
                    + " http://HOST:PORT/metrics while its engines run (0: any free port). Default: off.")
    Integer metricsPort;

    @Option(names = "--metrics-bind", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Interface of the --metrics-port endpoint (plain HTTP, no authentication). Default: ${DEFAULT-VALUE}.")
    String metricsBind;

    /** The meters of this command's engines, created at the first {@link #spec}; null without --metrics-port. */
    private CliMetrics metrics;

    @Option(names = "--procfs", paramLabel = "DIR", defaultValue = "/proc", hidden = true,
            description = "procfs root, for the host memory check (tests).")
    Path procfs;

    @Option(names = {"-v", "--verbose"}, description = "Log tcpx4j's own loggers (io.tcpx4j.*) at debug level on stderr, one line a record;"
                    + " other libraries stay at warnings. Default: warnings only.")
    boolean verbose;

    /** Checks ranges picocli cannot express; returns a message for the user or null. */
    String problem() {
        if (channels < 1 || channels > 64) {
            return "--channels must be 1..64, was " + channels;
        }
        if (agents < 1 || agents > EngineConfig.MAX_AGENTS) {
            return "--agents must be 1.." + EngineConfig.MAX_AGENTS + ", was " + agents;
        }
        if (chunkSize < MIN_CHUNK || chunkSize > EngineConfig.MAX_CHUNK) {
            return "--chunk-size must be 4K..4M (at least one 4-KiB page; TCPX holds at most 2048 4-KiB pages"
                    + " per receive), was " + ByteSize.format(chunkSize);
        }
        if (inlineLimit < 0 || inlineLimit > EngineConfig.MAX_INLINE) {
            return "--inline-limit must be 0..1M, was " + ByteSize.format(inlineLimit);
        }
        if (coalesceLimit < 0 || coalesceLimit > EngineConfig.MAX_CHUNK) {
            return "--coalesce-limit must be 0..4M, was " + ByteSize.format(coalesceLimit);
        }
        if (deviceCoalesceLimit < 0 || deviceCoalesceLimit > EngineConfig.MAX_CHUNK) {
            return "--device-coalesce-limit must be 0..4M, was " + ByteSize.format(deviceCoalesceLimit);
        }
        if (metricsPort != null && (metricsPort < 0 || metricsPort > 65535)) {
            return "--metrics-port must be 0..65535, was " + metricsPort;
        }
        if (ioThreads != null && (ioThreads < 0 || ioThreads > 16)) {
            return "--io-threads must be 0..16, was " + ioThreads;
        }
        if (ioThreads != null && transport != TransportKind.LOOPBACK) {
            return "--io-threads applies to --transport loopback only (TCPX moves bytes on its own threads)";
        }
        if (warmUp != null && (warmUp < 0 || warmUp > EngineConfig.MAX_WARM_UP_TRANSFERS)) {
            return "--warm-up must be 0.." + EngineConfig.MAX_WARM_UP_TRANSFERS + ", was " + warmUp;
        }
        return null;
    }

    /** The engine configuration for a named engine listening on {@code bindHost}, driven by its own threads. */
    EngineConfig engineConfig(String name, String bindHost) {
        return engineConfig(name, bindHost, Progress.Driver.THREAD);
    }

    /** The engine configuration for a named engine listening on {@code bindHost}, driven by {@code driver}. */
    EngineConfig engineConfig(String name, String bindHost, Progress.Driver driver) {
        return EngineConfig.defaults(name)
                .withListen(bindHost, 0)
                .withAdvertiseHost(advertise)
                .withChannels(channels)
                .withChunkSize((int) chunkSize)
                .withProgress(new Progress(driver, spin))
                .withInlineLimit((int) inlineLimit)
                .withCoalesceLimit((int) coalesceLimit)
                .withDeviceCoalesceLimit((int) deviceCoalesceLimit)
                .withAgents(agents)
                .withWarmUp(warmUp != null ? warmUp : defaultWarmUp)
                .withShutdownTimeout(Duration.ofSeconds(2));
    }

    Backends.Spec spec(String bindHost) {
        return spec(bindHost, memory);
    }

    /** As {@link #spec(String)}, for an engine whose buffers are of {@code kind} rather than --mem's. */
    Backends.Spec spec(String bindHost, MemoryKind kind) {
        return new Backends.Spec(transport, kind, bindHost, metrics(), Backends.CUDA, 0, ioThreads());
    }

    /** --io-threads, or the loopback transport's default. */
    int ioThreads() {
        return ioThreads != null ? ioThreads : LoopbackConfig.defaults().ioThreads();
    }

    /**
     * As {@link #spec(String, MemoryKind)}, with GPU memory from {@code gpus} and the engine's unpack kernel on
     * GPU {@code device}.
     */
    Backends.Spec spec(String bindHost, MemoryKind kind, GpuHost gpus, int device) {
        return new Backends.Spec(transport, kind, bindHost, metrics(), gpus, device, ioThreads());
    }

    /** The meters every engine of this command shares (one endpoint), or null without --metrics-port. */
    synchronized CliMetrics metrics() {
        if (metrics == null && metricsPort != null) {
            metrics = new CliMetrics(metricsBind, metricsPort);
        }
        return metrics;
    }
}
