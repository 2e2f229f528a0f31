package io.tcpx4j.nixl;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.EngineConfig;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The configuration of one TCPX backend, from NIXL's backend parameters (the key/value map an
 * application passes when it creates the backend) with environment variables as fallback:
 * parameter {@code transport} falls back to {@code TCPX4J_NIXL_TRANSPORT}, and so on (upper case,
 * prefix {@code TCPX4J_NIXL_}). Unknown keys are refused so that typos do not pass silently.
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><td>transport</td><td>{@code loopback} (default), {@code tcpx}, or the class name of a Guice
 *       module that binds a {@code NetTransport}</td></tr>
 *   <tr><td>cuda</td><td>{@code auto} (default: CUDA unpack when an NVIDIA GPU is present), {@code on},
 *       {@code off}</td></tr>
 *   <tr><td>listen_host, listen_port, advertise_host</td><td>control listener (default 127.0.0.1, any
 *       free port)</td></tr>
 *   <tr><td>channels, chunk_size</td><td>data channels per connection, bytes per chunk</td></tr>
 *   <tr><td>cost_network_gbps, cost_local_gbps, cost_latency_us</td><td>the cost model of
 *       estimateXferCost</td></tr>
 * </table>
 *
 * <p>Immutable.
 *
 * @param engine    engine settings (the name is the agent's)
 * @param transport {@code loopback}, {@code tcpx} or a module class name
 * @param cuda      {@code auto}, {@code on} or {@code off}
 * @param cost      estimateXferCost's model
 */
public record NixlBackendConfig(EngineConfig engine, String transport, String cuda, CostModel cost) {

    public static final Set<String> KEYS = Set.of("transport", "cuda", "listen_host", "listen_port",
            "advertise_host", "channels", "chunk_size", "cost_network_gbps", "cost_local_gbps", "cost_latency_us");

    public NixlBackendConfig {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(cuda, "cuda");
        Objects.requireNonNull(cost, "cost");
        if (!Set.of("auto", "on", "off").contains(cuda)) {
            throw new TransferException(Code.INVALID_PARAM, "cuda must be auto, on or off, not " + cuda);
        }
    }

    /** Parses parameters, falling back to the process environment. */
    public static NixlBackendConfig parse(String agent, Map<String, String> params) {
        return parse(agent, params, System.getenv());
    }

    /** Parses parameters, falling back to {@code env} ({@code TCPX4J_NIXL_<KEY>}). */
    public static NixlBackendConfig parse(String agent, Map<String, String> params, Map<String, String> env) {
        Map<String, String> p = new HashMap<>();
        for (String key : KEYS) {
            String v = env.get("TCPX4J_NIXL_" + key.toUpperCase(Locale.ROOT));
            if (v != null && !v.isBlank()) {
                p.put(key, v.trim());
            }
        }
        for (Map.Entry<String, String> e : params.entrySet()) {
            if (!KEYS.contains(e.getKey())) {
                throw new TransferException(Code.INVALID_PARAM,
                        "unknown TCPX backend parameter '" + e.getKey() + "'; known: " + KEYS);
            }
            if (e.getValue() != null && !e.getValue().isBlank()) {
                p.put(e.getKey(), e.getValue().trim());
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
            engine = engine.withChunkSize(integer(p, "chunk_size", engine.chunkSize()));
        }
        CostModel d = CostModel.DEFAULT;
        CostModel cost = new CostModel(
                decimal(p, "cost_network_gbps", d.networkBytesPerSecond() * 8 / 1e9) * 1e9 / 8,
                decimal(p, "cost_local_gbps", d.localBytesPerSecond() * 8 / 1e9) * 1e9 / 8,
                (long) decimal(p, "cost_latency_us", d.latencyMicros()), d.marginPercent());
        return new NixlBackendConfig(engine, p.getOrDefault("transport", "loopback"),
                p.getOrDefault("cuda", "auto").toLowerCase(Locale.ROOT), cost);
    }

    private static int integer(Map<String, String> p, String key, int fallback) {
        String v = p.get(key);
        try {
            return v == null ? fallback : Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new TransferException(Code.INVALID_PARAM, key + " must be an integer, not '" + v + "'");
        }
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
            throw new TransferException(Code.INVALID_PARAM, key + " must be a positive number, not '" + v + "'");
        }
    }
}
