package io.tcpx4j.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.SocketException;
import java.time.Duration;

/**
 * How a bench initiator reaches its target within {@code --peer-wait}: the local address its engine
 * should use, then the out-of-band connection and the hello, started over while the target is not
 * listening yet (the connection is refused), is full, or drops the connection before its welcome.
 *
 * <p>The initiator's engine starts before the connection is made (see {@link #localAddress()}), so
 * its hello follows the connection at once: the target's {@code --hello-timeout} then measures the
 * network, not how long an engine takes to start. A target that answers with an error (a mismatched
 * hello, a buffer it cannot serve), that is silent, or that speaks another protocol ends the dial at
 * once: another try would meet the same answer.
 *
 * <p><b>Not thread-safe.</b>
 */
final class TargetDial implements AutoCloseable {

    private static final Duration FIRST_PAUSE = Duration.ofMillis(250);
    private static final Duration LONGEST_PAUSE = Duration.ofSeconds(2);

    private final HostPort target;
    private final Duration patience;
    private final PrintStream notices;
    /** {@link System#nanoTime()} when patience runs out, set at the first connection attempt. */
    private long deadline;
    private boolean started;
    /** A connection made to learn the local address, for the first hello; null when none is held. */
    private OobChannel held;

    /**
     * @param notices where one line says that the dial keeps trying (null: nowhere)
     */
    TargetDial(HostPort target, Duration patience, PrintStream notices) {
        this.target = target;
        this.patience = patience;
        this.notices = notices;
    }

    /**
     * The local address that reaches the target: the source address of the route to it, which a
     * connected UDP socket learns without sending anything. Where the system does not say (the route
     * does not exist yet, or the platform reports no address), it connects to the target, within
     * patience, and takes the connection's own address; that connection then carries the first hello.
     */
    InetAddress localAddress() throws IOException, InterruptedException {
        java.net.InetSocketAddress at = OobChannel.resolve(target);
        try (DatagramSocket route = new DatagramSocket()) {
            route.connect(at);
            InetAddress a = route.getLocalAddress();
            if (a != null && !a.isAnyLocalAddress()) {
                return a;
            }
        } catch (SocketException noRoute) {
            // the connection below waits for the network within patience, and says why it gave up
        }
        held = connect();
        return held.localAddress();
    }

    /**
     * Says hello with these details and returns the target's half of the run once welcomed; see
     * {@link OobClient#open}. A refused connection, a full target, or a connection dropped before the
     * welcome is tried again after a short pause that doubles up to two seconds, until patience has
     * passed since the first attempt; the first such retry is said once on {@code notices}.
     */
    OobClient open(String name, byte[] connInfo, long bytes, String mem, String transport, Duration timeout,
                   Duration pingInterval, int devices) throws IOException, InterruptedException {
        boolean told = false;
        Duration pause = FIRST_PAUSE;
        while (true) {
            OobChannel c = held != null ? held : connect();
            held = null;
            try {
                return OobClient.open(c, name, connInfo, bytes, mem, transport, timeout, pingInterval, notices,
                        devices);
            } catch (OobChannel.TurnedAway e) {
                c.close();
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw patience.isZero() ? e : new OobChannel.TurnedAway(e.getMessage() + " (still so after --peer-wait "
                            + patience.toSeconds() + " s)", e);
                }
                if (!told && notices != null) {
                    notices.println("tcpx4j: " + e.getMessage() + "; retrying for up to " + patience.toSeconds()
                            + " s (--peer-wait)");
                    notices.flush();
                    told = true;
                }
                Thread.sleep(Math.min(pause.toMillis(), Math.max(1, left / 1_000_000)));
                pause = pause.multipliedBy(2).compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : pause.multipliedBy(2);
            } catch (IOException | RuntimeException e) {
                c.close();
                throw e;
            }
        }
    }

    /**
     * Connects within what is left of patience; the first connection starts the clock, and only it says
     * that it waits for the target to listen.
     */
    private OobChannel connect() throws IOException, InterruptedException {
        if (!started) {
            started = true;
            deadline = System.nanoTime() + patience.toNanos();
            return OobChannel.connect(target, patience, notices);
        }
        return OobChannel.connect(target, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), null);
    }

    /** Closes a connection still held for a hello that was never said. */
    @Override
    public void close() {
        if (held != null) {
            held.close();
            held = null;
        }
    }
}
