package io.tcpx4j.nixl;

import io.tcpx4j.api.ByteSize;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.Progress;

import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The configuration of one TCPX backend, from NIXL's backend parameters (the key/value map an
 * application passes when it creates the backend) and the environment ({@code TCPX4J_NIXL_<KEY>},
 * upper case: parameter {@code transport} is {@code TCPX4J_NIXL_TRANSPORT}, and so on).
 *
 * <p>Precedence, per key: a parameter whose value differs from its advertised default, then the
 * environment variable, then the advertised default. A parameter equal to its advertised default
 * (or blank) counts as unset, because hosts such as nixlbench pass every advertised option back
 * explicitly: the environment must still be able to choose {@code transport=tcpx} or
 * {@code cuda=off} under them. Unknown keys are refused so that typos do not pass silently.
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><td>transport</td><td>{@code loopback} (default), {@code tcpx}, or the class name of a Guice
 *       module that binds a {@code NetTransport}</td></tr>
 *   <tr><td>cuda</td><td>{@code auto} (default: CUDA unpack when an NVIDIA GPU is present and the
 *       cuda-unpack module is on the class path), {@code on}, {@code off}</td></tr>
 *   <tr><td>listen_host, listen_port, advertise_host</td><td>control listener (default 127.0.0.1, any
 *       free port)</td></tr>
 *   <tr><td>channels, chunk_size</td><td>data channels per connection, bytes per chunk</td></tr>
 *   <tr><td colspan="2">chunk_size and the limits below are byte counts: {@code 524288} or {@code 512K}
 *       ({@link ByteSize}: K, M, G, binary)</td></tr>
 *   <tr><td>inline_limit</td><td>transfers of at most this many bytes between host memory travel in
 *       their control frames (0: never; default {@link #DEFAULT_INLINE_LIMIT}; at most 1 MiB)</td></tr>
 *   <tr><td>coalesce_limit</td><td>descriptors of host memory of at most this many bytes share chunks of
 *       up to 128 KiB with their neighbours (0: never; default 32 KiB)</td></tr>
 *   <tr><td>device_coalesce_limit</td><td>the same for device memory on both sides, chunks of up to
 *       512 KiB gathered and scattered by the unpack kernel (0: never; default 128 KiB)</td></tr>
 *   <tr><td>cost_network_gbps, cost_local_gbps, cost_latency_us</td><td>the cost model of
 *       estimateXferCost</td></tr>
 *   <tr><td>agents</td><td>the engine's progress agents, each serving the agents whose names hash to it
 *       (default 1, at most 64); they run side by side on their own threads ({@code progress=thread})</td></tr>
 *   <tr><td>progress</td><td>{@code thread} (default): a thread per agent drives the engine, and postXfer,
 *       checkXfer and getNotifs only hand over and look; {@code inline}: the calling threads drive it
 *       inside those calls and nothing else does (a host that stops calling stops the engine, heartbeats
 *       included)</td></tr>
 *   <tr><td>warm_up</td><td>transfers the backend runs between two private engines of its own in the
 *       background when it starts, so the JIT has compiled the transfer paths before the host's first
 *       transfer (0: none; default {@link EngineConfig#DEFAULT_WARM_UP_TRANSFERS}; at most
 *       {@link EngineConfig#MAX_WARM_UP_TRANSFERS})</td></tr>
 *   <tr><td>io_threads</td><td>{@code transport=loopback} only: threads that move the data sockets' bytes,
 *       0..16 (default 2); 0: none, the engine's driver moves them inside its own calls (with
 *       {@code progress=inline}: the host's threads in postXfer, checkXfer and getNotifs)</td></tr>
 *   <tr><td>poll_wait</td><td>{@code progress=thread} only: microseconds a checkXfer or getNotifs that finds
 *       nothing new, in a host's poll loop, waits for the engine while the calling thread's CPUs are contended
 *       (0..1000000; default 100; 0: never waits; {@link PollWait})</td></tr>
 *   <tr><td>spin</td><td>{@code progress=thread} only: microseconds an agent's thread spins after a step that
 *       found nothing to do before it blocks in the kernel, while its CPUs are not contended (0..1000000;
 *       default {@link Progress#DEFAULT_SPIN}; 0: blocks at once)</td></tr>
 * </table>
 *
 * <p>Immutable.
 *
 * @param engine    engine settings (the name is the agent's), the warm-up ({@code warm_up}) included
 * @param transport {@code loopback}, {@code tcpx} or a module class name
 * @param cuda      {@code auto}, {@code on} or {@code off}
 * @param cost      estimateXferCost's model
 * @param inlineProgress {@code progress=inline}: postXfer, checkXfer and getNotifs drive the engine on the
 *                  calling thread, and nothing else does; {@code thread}: only the engine's threads do
 * @param ioThreads the loopback transport's I/O threads ({@code io_threads}), 0..16
 * @param pollWait  {@code poll_wait}: how long a poll loop's empty poll waits for the engine on contended CPUs
 * @param sources   where each key that has a value came from: {@code parameter},
 *                  {@code TCPX4J_NIXL_<KEY>} or {@code default}
 */
public record NixlBackendConfig(EngineConfig engine, String transport, String cuda, CostModel cost,
                                boolean inlineProgress, int ioThreads, Duration pollWait,
                                Map<String, String> sources) {

    /** Prefix of the environment variables that stand in for backend parameters. */
    public static final String ENV_PREFIX = "TCPX4J_NIXL_";

    /**
     * Every key with the default the plugin advertises for it (NIXL's {@code getPluginParams}); an
     * empty default means "the engine's default", except for {@code inline_limit}, whose empty default is
     * {@link #DEFAULT_INLINE_LIMIT}. The C bridge's {@code tcpx4j_nixl_advertised_params}
     * holds the same table for the plugin, which must not start a Java VM to answer.
     */
    public static final Map<String, String> ADVERTISED = advertised();

    /** The keys this backend accepts. */
    public static final Set<String> KEYS = ADVERTISED.keySet();

    public NixlBackendConfig {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(cuda, "cuda");
        Objects.requireNonNull(cost, "cost");
        Objects.requireNonNull(pollWait, "pollWait");
        sources = Map.copyOf(sources);
        if (!Set.of("auto", "on", "off").contains(cuda)) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter 'cuda' must be auto, on or off, not '"
                    + cuda + "'");
        }
    }

    private static Map<String, String> advertised() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("transport", "loopback");
        m.put("cuda", "auto");
        m.put("listen_host", "127.0.0.1");
        m.put("listen_port", "0");
        m.put("progress", "thread");
        for (String k : List.of("advertise_host", "channels", "chunk_size", "inline_limit", "coalesce_limit",
                "device_coalesce_limit", "cost_network_gbps",
                "cost_local_gbps",
                "cost_latency_us", "agents", "warm_up", "io_threads", "poll_wait", "spin")) {
            m.put(k, "");
        }
        return Collections.unmodifiableMap(m);
    }

    /** Parses parameters, falling back to the process environment. */
    public static NixlBackendConfig parse(String agent, Map<String, String> params) {
        return parse(agent, params, System.getenv());
    }

    /** Parses parameters with {@code env} as the environment ({@code TCPX4J_NIXL_<KEY>}). */
    public static NixlBackendConfig parse(String agent, Map<String, String> params, Map<String, String> env) {
        for (String key : params.keySet()) {
            if (!KEYS.contains(key)) {
                throw new TransferException(Code.INVALID_PARAM,
                        "unknown TCPX backend parameter '" + key + "' (known: " + String.join(", ", KEYS) + ")");
            }
        }
        Map<String, String> p = new HashMap<>();
        Map<String, String> sources = new TreeMap<>();
        for (Map.Entry<String, String> a : ADVERTISED.entrySet()) {
            String key = a.getKey();
            String given = trimmed(params.get(key));
            String envName = ENV_PREFIX + key.toUpperCase(Locale.ROOT);
            String fromEnv = trimmed(env.get(envName));
            if (given != null && !given.equals(a.getValue())) {
                p.put(key, given);
                sources.put(key, "parameter");
            } else if (fromEnv != null) {
                p.put(key, fromEnv);
                sources.put(key, envName);
            } else if (!a.getValue().isEmpty()) {
                p.put(key, a.getValue());
                sources.put(key, "default");
            }
        }
        EngineConfig engine = EngineConfig.defaults(agent);
        if (p.containsKey("listen_host") || p.containsKey("listen_port")) {
            engine = engine.withListen(p.getOrDefault("listen_host", engine.listenHost()),
                    integer(p, "listen_port", engine.listenPort()));
        }
        if (p.containsKey("advertise_host")) {
            engine = engine.withAdvertiseHost(p.get("advertise_host"));
        }
        if (p.containsKey("channels")) {
            engine = engine.withChannels(integer(p, "channels", engine.channels()));
        }
        if (p.containsKey("chunk_size")) {
            engine = engine.withChunkSize(size(p, "chunk_size", engine.chunkSize()));
        }
        engine = engine.withInlineLimit(size(p, "inline_limit", DEFAULT_INLINE_LIMIT));
        if (p.containsKey("coalesce_limit")) {
            engine = engine.withCoalesceLimit(size(p, "coalesce_limit", engine.coalesceLimit()));
        }
        if (p.containsKey("device_coalesce_limit")) {
            engine = engine.withDeviceCoalesceLimit(size(p, "device_coalesce_limit",
                    engine.deviceCoalesceLimit()));
        }
        if (p.containsKey("agents")) {
            engine = engine.withAgents(integer(p, "agents", engine.agents()));
        }
        CostModel d = CostModel.DEFAULT;
        CostModel cost = new CostModel(
                decimal(p, "cost_network_gbps", d.networkBytesPerSecond() * 8 / 1e9) * 1e9 / 8,
                decimal(p, "cost_local_gbps", d.localBytesPerSecond() * 8 / 1e9) * 1e9 / 8,
                (long) decimal(p, "cost_latency_us", d.latencyMicros()), d.marginPercent());
        String progress = p.get("progress").toLowerCase(Locale.ROOT);
        if (!progress.equals("inline") && !progress.equals("thread")) {
            throw new TransferException(Code.INVALID_PARAM,
                    "TCPX backend parameter 'progress' must be inline or thread, not '" + progress + "'");
        }
        boolean inline = progress.equals("inline");
        engine = engine.withProgress(engine.progress().withDriver(inline ? Progress.Driver.CALLER : Progress.Driver.THREAD));
        int warmUp = integer(p, "warm_up", EngineConfig.DEFAULT_WARM_UP_TRANSFERS);
        if (warmUp < 0 || warmUp > EngineConfig.MAX_WARM_UP_TRANSFERS) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter 'warm_up' must be 0.."
                    + EngineConfig.MAX_WARM_UP_TRANSFERS + ", not " + warmUp);
        }
        int ioThreads = integer(p, "io_threads", DEFAULT_IO_THREADS);
        if (ioThreads < 0 || ioThreads > 16) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter 'io_threads' must be 0..16, not "
                    + ioThreads);
        }
        if (p.containsKey("io_threads") && !p.get("transport").equals("loopback")) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter 'io_threads' applies to"
                    + " transport=loopback only, not '" + p.get("transport") + "'");
        }
        Duration pollWait = threadDriverMicros(p, "poll_wait", PollWait.DEFAULT_WINDOW, PollWait.MAX_WINDOW, inline,
                "with progress=inline the polling thread drives the engine");
        Duration spin = threadDriverMicros(p, "spin", Progress.DEFAULT_SPIN, Progress.MAX_SPIN, inline,
                "with progress=inline no engine thread waits");
        engine = engine.withProgress(engine.progress().withSpin(spin));
        return new NixlBackendConfig(engine.withWarmUp(warmUp), p.get("transport"),
                p.get("cuda").toLowerCase(Locale.ROOT), cost, inline, ioThreads,
                inline ? Duration.ZERO : pollWait, sources);
    }

    /** Where {@code key}'s value came from ({@code parameter}, {@code TCPX4J_NIXL_<KEY>} or {@code default}). */
    public String source(String key) {
        return sources.getOrDefault(key, "default");
    }

    private static String trimmed(String v) {
        return v == null || v.isBlank() ? null : v.trim();
    }

    /**
     * The inline limit of a NIXL backend: larger than the engine's, because a NIXL host posts one transfer
     * at a time per request and waits for it, where an inline transfer costs one control frame each way
     * and no transport request; chunks win once a transfer fills two chunks side by side. The engine's
     * smaller default serves targets that many initiators write into (docs/CONFIG.md, "Defaults per entry point").
     */
    public static final int DEFAULT_INLINE_LIMIT = 128 * 1024;

    /** The loopback transport's I/O threads unless {@code io_threads} says otherwise: its own default. */
    static final int DEFAULT_IO_THREADS = 2;

    /**
     * A time in microseconds that only {@code progress=thread} uses: {@code key}'s value, or {@code fallback}
     * without one; INVALID_PARAM outside 0..{@code max}, or where given with {@code progress=inline}
     * ({@code inlineReason} says why it means nothing there).
     */
    private static Duration threadDriverMicros(Map<String, String> p, String key, Duration fallback, Duration max,
                                               boolean inline, String inlineReason) {
        long micros = integer(p, key, (int) (fallback.toNanos() / 1000));
        if (micros < 0 || micros > max.toNanos() / 1000) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter '" + key + "' must be 0.."
                    + max.toNanos() / 1000 + " microseconds, not " + micros);
        }
        if (p.containsKey(key) && inline) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter '" + key + "' applies to"
                    + " progress=thread only: " + inlineReason);
        }
        return Duration.ofNanos(micros * 1000);
    }

    private static int integer(Map<String, String> p, String key, int fallback) {
        String v = p.get(key);
        try {
            return v == null ? fallback : Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter '" + key + "' must be an integer, not '"
                    + v + "'");
        }
    }

    /** A byte count: {@code 524288} or {@code 512K} ({@link ByteSize}); 0 passes (limits that turn off). */
    private static int size(Map<String, String> p, String key, int fallback) {
        String v = p.get(key);
        if (v == null) {
            return fallback;
        }
        long bytes;
        try {
            bytes = ByteSize.parseOrZero(v.trim());
        } catch (IllegalArgumentException e) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter '" + key
                    + "' must be a size in bytes (e.g. 524288 or 512K), not '" + v + "'");
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter '" + key + "' of " + v
                    + " is too large");
        }
        return (int) bytes;
    }

    private static double decimal(Map<String, String> p, String key, double fallback) {
        String v = p.get(key);
        try {
            double d = v == null ? fallback : Double.parseDouble(v);
            if (!(d > 0) || Double.isInfinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new TransferException(Code.INVALID_PARAM, "TCPX backend parameter '" + key
                    + "' must be a positive number, not '" + v + "'");
        }
    }
}
