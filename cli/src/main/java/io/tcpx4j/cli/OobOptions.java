package io.tcpx4j.cli;

import picocli.CommandLine.Option;

import java.time.Duration;

/** Deadlines of the out-of-band connection, shared by {@code bench} (two-host roles) and {@code serve}. */
final class OobOptions {

    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    /**
     * A hello is one line well under a kilobyte, sent as soon as the connection is up (an initiator's
     * engine has started before it connects), so it arrives one trip after the connection; this
     * leaves room for TCP to retransmit a lost segment a few times (its retransmission timeout starts
     * between 200 ms and 1 s and doubles with each loss) on a slow or lossy path. What keeps silent
     * connections from locking initiators out is the gate's eviction, not this deadline; it bounds
     * how long a connection without a hello holds a place when no one else needs it.
     */
    static final Duration DEFAULT_HELLO_TIMEOUT = Duration.ofSeconds(5);
    /** Longest gap between a busy side's keep-alives. */
    private static final Duration MAX_PING_INTERVAL = Duration.ofSeconds(1);

    @Option(names = "--oob-timeout", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.Converter.class,
            description = "Two-host runs: how long either side waits for the other's next out-of-band message"
                    + " (a busy side sends a keep-alive every second, or every quarter of the shorter of both"
                    + " sides' timeouts); silence this long fails the run. 500ms, 30s, 2m or seconds."
                    + " Default: ${DEFAULT-VALUE}.")
    Duration timeout = DEFAULT_TIMEOUT;

    @Option(names = "--hello-timeout", paramLabel = "DURATION", defaultValue = "5s", converter = Durations.Converter.class,
            description = "Target: how long a new connection may take, from its accept, to send its complete hello"
                    + " before it is dropped (a newer connection may also take its place sooner: at most "
                    + HelloGate.PER_ADDRESS + " from one address and " + HelloGate.WAITING + " in all wait for their"
                    + " hello). Default: ${DEFAULT-VALUE}.")
    Duration helloTimeout = DEFAULT_HELLO_TIMEOUT;

    /** Keep-alive interval: a quarter of the timeout, at most one second. */
    Duration pingInterval() {
        return pingInterval(null);
    }

    /**
     * Keep-alive interval towards a peer whose own timeout is {@code peerTimeout} (null: not known): a
     * quarter of the shorter of both timeouts, at most one second.
     */
    Duration pingInterval(Duration peerTimeout) {
        Duration shorter = peerTimeout != null && peerTimeout.compareTo(timeout) < 0 ? peerTimeout : timeout;
        Duration quarter = shorter.dividedBy(4);
        return quarter.compareTo(MAX_PING_INTERVAL) < 0 ? quarter : MAX_PING_INTERVAL;
    }
}
