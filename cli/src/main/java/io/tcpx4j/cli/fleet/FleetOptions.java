package io.tcpx4j.cli.fleet;

import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.regex.Pattern;

/**
 * {@code bench} flags of a fleet run: N workers, one process each, coordinated through etcd (as
 * nixlbench's {@code --etcd_endpoints}, {@code --benchmark_group} and {@code --scheme}).
 */
public final class FleetOptions {

    static final String DEFAULT_GROUP = "default";
    static final int DEFAULT_WORKERS = 2;
    static final int DEFAULT_BARRIER_SECONDS = 300;
    private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    @Option(names = "--etcd-endpoints", paramLabel = "URL[,URL...]",
            description = "Fleet run: join a benchmark group of --workers processes through this etcd (3.4 or"
                    + " later, its v3 JSON gateway; http://HOST:PORT, comma-separated for several) instead of"
                    + " running embedded or as one side of a two-host run.")
    String endpoints;

    @Option(names = "--benchmark-group", paramLabel = "NAME",
            description = "Fleet run: the group's name in etcd; concurrent runs need different names. Default: "
                    + DEFAULT_GROUP + ".")
    String group;

    @Option(names = "--scheme", paramLabel = "pairwise|manytoone|onetomany",
            description = "Fleet run: who moves data to whom. pairwise: rank 2i is the initiator of rank 2i+1;"
                    + " manytoone: every other rank of rank 0; onetomany: rank 0 of every other rank."
                    + " Default: pairwise.")
    String scheme;

    @Option(names = "--workers", paramLabel = "N",
            description = "Fleet run: processes in the benchmark group (each started with the same flags), at"
                    + " least 2 (even for pairwise). Default: " + DEFAULT_WORKERS + ".")
    Integer workers;

    @Option(names = "--barrier-timeout", paramLabel = "SECONDS",
            description = "Fleet run: the longest wait for the other workers at the start and end of a row (the"
                    + " slowest initiator of a row sets its pace); a worker that fails or ends is noticed at"
                    + " once, or within 5 s when it vanishes. Default: " + DEFAULT_BARRIER_SECONDS + ".")
    Integer barrierSeconds;

    /** Whether this is a fleet run. */
    public boolean enabled() {
        return endpoints != null;
    }

    /**
     * What is wrong with the fleet flags, or null.
     *
     * @param twoHost whether a two-host flag ({@code --role}, {@code --peer}, {@code --listen}) was given
     */
    public String problem(boolean twoHost) {
        if (endpoints == null) {
            String stray = scheme != null ? "--scheme" : workers != null ? "--workers"
                    : group != null ? "--benchmark-group" : barrierSeconds != null ? "--barrier-timeout" : null;
            return stray == null ? null : stray + " is for fleet runs: add --etcd-endpoints URL";
        }
        if (twoHost) {
            return "--etcd-endpoints starts a fleet run; --role, --peer and --listen are the two-host mode: use one";
        }
        try {
            EtcdClient.parseEndpoints(endpoints);
        } catch (IllegalArgumentException e) {
            return "--etcd-endpoints: " + e.getMessage();
        }
        if (!GROUP.matcher(group()).matches()) {
            return "--benchmark-group must be 1..128 letters, digits, '.', '_' or '-', was '" + group() + "'";
        }
        Scheme s;
        try {
            s = scheme();
        } catch (IllegalArgumentException e) {
            return "--scheme: " + e.getMessage();
        }
        String w = s.workersProblem(workers());
        if (w != null) {
            return w;
        }
        if (barrierSeconds() < 1) {
            return "--barrier-timeout must be at least 1 second, was " + barrierSeconds();
        }
        return null;
    }

    /**
     * The fewest peers a worker of one role has in this run's scheme: the targets of an initiator
     * ({@code initiator}), else the initiators of a target. Each peer has blocks of its own in a row.
     */
    public int fewestPeers(boolean initiator) {
        Scheme s = scheme();
        int w = workers();
        int fewest = Integer.MAX_VALUE;
        for (int r = 0; r < w; r++) {
            int n = initiator ? s.targetsOf(r, w).size() : s.initiatorsOf(r, w).size();
            if (n > 0) {
                fewest = Math.min(fewest, n);
            }
        }
        return fewest == Integer.MAX_VALUE ? 1 : fewest;
    }

    List<URI> endpoints() {
        return EtcdClient.parseEndpoints(endpoints);
    }

    String group() {
        return group != null ? group : DEFAULT_GROUP;
    }

    Scheme scheme() {
        return scheme != null ? Scheme.parse(scheme) : Scheme.PAIRWISE;
    }

    int workers() {
        return workers != null ? workers : DEFAULT_WORKERS;
    }

    int barrierSeconds() {
        return barrierSeconds != null ? barrierSeconds : DEFAULT_BARRIER_SECONDS;
    }

    /**
     * The address of this host's interface that routes to the first etcd endpoint: where the other
     * workers, which reach the same etcd, can reach this worker's engine. No packet is sent.
     */
    public String localAddress() throws IOException {
        URI first = endpoints().get(0);
        InetAddress etcd = InetAddress.getByName(first.getHost());
        if (etcd.isLoopbackAddress()) {
            return etcd.getHostAddress();
        }
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(etcd, first.getPort()));
            InetAddress local = probe.getLocalAddress();
            if (local == null || local.isAnyLocalAddress()) {
                throw new IOException("no route from this host to etcd at " + first + ": pass --bind HOST");
            }
            return local.getHostAddress();
        }
    }
}
