package io.tcpx4j.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A target's out-of-band door: accepts connections and holds each one until its first line (the
 * hello) is complete, all on the one thread that calls {@link #next()}, so a connection that has not
 * said hello costs a socket and a line buffer but no thread. Only a connection whose first line is
 * complete leaves the gate, in blocking mode, with the bytes read so far.
 *
 * <p>Connections that never finish a hello (silent, a hello cut short, bytes of another protocol)
 * cannot lock real initiators out, because the gate never refuses a newcomer for want of room: it
 * makes room by dropping the oldest connection still without a hello, and it chooses whom to drop
 * by address:
 * <ul>
 *   <li>at most {@value #PER_ADDRESS} connections from one remote address wait for their hello; a
 *       newer one from that address drops that address's oldest (a few, so that several initiators of
 *       one host starting together all get in);</li>
 *   <li>at most {@value #WAITING} wait in all; a newcomer then drops the oldest connection of the
 *       address that holds the most of them, so one host (or a few) flooding the port drops its own
 *       connections, not those of a host that holds fewer.</li>
 * </ul>
 * Dropping the oldest rather than refusing the newest is what keeps the door open: a real initiator
 * sends its hello as soon as its connection is up, so it is the newest waiting connection of its
 * address for the round trip or two the hello takes, and it would have to be followed by
 * {@value #PER_ADDRESS} more connections from its own address within that time to be dropped (an
 * initiator that is dropped all the same connects again within its {@code --peer-wait}). All
 * clients on one host share its address (loopback clients all come from 127.0.0.1), which is why
 * the per-address limit drops rather than refuses: the newest connection of a flooded address still
 * gets its turn. Each connection also has {@code deadline} from its accept to complete its hello.
 *
 * <p><b>Not thread-safe</b>: {@link #next()} and {@link #close()} belong to one thread;
 * {@link #wakeup()} may be called from any thread.
 */
final class HelloGate implements AutoCloseable {

    /** Connections from one remote address that may wait for their hello at once. */
    static final int PER_ADDRESS = 4;
    /** Connections that may wait for their hello at once, from all addresses. */
    static final int WAITING = 32;
    /**
     * The shortest time between two lines about dropped connections: anyone can open connections as
     * fast as they like, and must not flood the log with them.
     */
    private static final long LINE_INTERVAL_NANOS = 1_000_000_000L;

    /** A connection whose first line is complete: blocking again, with every byte read from it so far. */
    record Arrival(SocketChannel channel, byte[] received) {
    }

    /** A connection waiting for its hello. */
    private static final class Waiting {
        final SocketChannel channel;
        final InetAddress address;
        final String remote;
        final long acceptedAt;
        SelectionKey key;
        byte[] received = new byte[512];
        int length;

        Waiting(SocketChannel channel, InetSocketAddress from, long acceptedAt) {
            this.channel = channel;
            this.address = from.getAddress();
            this.remote = String.valueOf(from);
            this.acceptedAt = acceptedAt;
        }
    }

    private final ServerSocketChannel server;
    private final Duration deadline;
    private final PrintStream log;
    private final Selector selector;
    /** Every waiting connection, oldest first: the order of their deadlines. */
    private final LinkedHashSet<Waiting> byAge = new LinkedHashSet<>();
    /** The same connections by remote address, oldest first per address. */
    private final Map<InetAddress, ArrayDeque<Waiting>> byAddress = new HashMap<>();
    private final ByteBuffer readBuffer = ByteBuffer.allocate(8192);
    private final List<Waiting> leaving = new ArrayList<>();
    private long lastLine = System.nanoTime() - LINE_INTERVAL_NANOS;
    private int linesLeftOut;

    /**
     * Takes over accepting on {@code server} (switched to non-blocking); {@code log} gets a line for each
     * connection dropped.
     */
    HelloGate(ServerSocketChannel server, Duration deadline, PrintStream log) throws IOException {
        this.server = server;
        this.deadline = deadline;
        this.log = log;
        this.selector = Selector.open();
        try {
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            selector.close();
            throw e;
        }
    }

    /**
     * Waits until something happens at the door (a connection, bytes, a deadline, {@link #wakeup()})
     * and returns the connections whose first line has become complete, possibly none. The caller
     * owns them.
     */
    List<Arrival> next() throws IOException {
        if (selector.selectedKeys().isEmpty()) {
            Waiting oldest = byAge.isEmpty() ? null : byAge.iterator().next();
            if (oldest == null) {
                selector.select();
            } else {
                long left = oldest.acceptedAt + deadline.toNanos() - System.nanoTime();
                if (left > 0) {
                    selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left) + 1));
                }
            }
        }
        Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
        while (keys.hasNext()) {
            SelectionKey k = keys.next();
            keys.remove();
            if (!k.isValid()) {
                continue;
            }
            if (k.isAcceptable()) {
                acceptAll();
            } else if (k.isReadable()) {
                read((Waiting) k.attachment());
            }
        }
        expire(System.nanoTime());
        return handOver();
    }

    /**
     * Accepts what the listener holds, up to {@value #WAITING} at a time: a flood of connections must
     * not keep this thread from reading the hellos of those already in.
     */
    private void acceptAll() {
        for (int i = 0; i < WAITING; i++) {
            SocketChannel s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (!server.isOpen()) {
                    return;
                }
                // out of descriptors, most likely: the oldest waiting connection gives one back (its
                // descriptor is released when the next selection deregisters it; the listener is
                // still ready then, and the accept is tried again)
                Waiting oldest = byAge.isEmpty() ? null : byAge.iterator().next();
                if (oldest == null) {
                    say("tcpx4j: accepting a connection failed: " + e.getMessage());
                    pauseAfterFailedAccept();
                } else {
                    drop(oldest, ": no complete hello yet, and accepting a newer connection failed ("
                            + e.getMessage() + ")");
                }
                return;
            }
            if (s == null) {
                return;
            }
            admit(s);
        }
    }

    /**
     * The listener stays ready while accepting fails (no descriptor left and none of ours to give
     * back): a short pause keeps this thread from spinning on it. Nothing waits for its hello then.
     */
    private static void pauseAfterFailedAccept() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void admit(SocketChannel s) {
        Waiting w;
        try {
            InetSocketAddress from = (InetSocketAddress) s.getRemoteAddress();
            w = new Waiting(s, from, System.nanoTime());
            s.configureBlocking(false);
        } catch (IOException | RuntimeException e) {
            closeQuietly(s); // gone before it was looked at
            return;
        }
        ArrayDeque<Waiting> same = byAddress.get(w.address);
        if (same != null && same.size() >= PER_ADDRESS) {
            drop(same.peekFirst(), ": no complete hello yet, and a newer connection from " + w.address.getHostAddress()
                    + " takes its place (at most " + PER_ADDRESS + " from one address wait for their hello)");
        } else if (byAge.size() >= WAITING) {
            ArrayDeque<Waiting> most = null;
            for (ArrayDeque<Waiting> q : byAddress.values()) {
                if (most == null || q.size() > most.size()
                        || q.size() == most.size() && q.peekFirst().acceptedAt - most.peekFirst().acceptedAt < 0) {
                    most = q;
                }
            }
            drop(most.peekFirst(), ": no complete hello yet, and a newer connection takes its place (at most " + WAITING
                    + " wait for their hello; " + most.peekFirst().address.getHostAddress() + " holds the most)");
        }
        try {
            w.key = s.register(selector, SelectionKey.OP_READ, w);
        } catch (IOException | RuntimeException e) {
            closeQuietly(s);
            return;
        }
        byAge.add(w);
        byAddress.computeIfAbsent(w.address, a -> new ArrayDeque<>()).addLast(w);
    }

    private void read(Waiting w) {
        int n;
        try {
            readBuffer.clear();
            n = w.channel.read(readBuffer);
        } catch (IOException e) {
            drop(w, " before its hello: " + e.getMessage());
            return;
        }
        if (n < 0) {
            drop(w, " before its hello: it closed the connection");
            return;
        }
        int from = w.length;
        if (from + n > w.received.length) {
            w.received = Arrays.copyOf(w.received, Math.max(from + n, 2 * w.received.length));
        }
        readBuffer.flip().get(w.received, from, n);
        w.length = from + n;
        boolean lineEnds = false;
        for (int i = from; i < w.length && !lineEnds; i++) {
            lineEnds = w.received[i] == '\n';
        }
        // a line too long for the protocol goes on too: the channel's reader names what was sent
        if (lineEnds || w.length > OobChannel.MAX_LINE) {
            forget(w);
            w.key.cancel();
            leaving.add(w);
        }
    }

    private void expire(long now) {
        Iterator<Waiting> it = byAge.iterator();
        while (it.hasNext()) {
            Waiting w = it.next();
            if (now - w.acceptedAt - deadline.toNanos() < 0) {
                return;
            }
            it.remove();
            forget(w);
            // the line first: whoever sees the connection close may look for it
            say("tcpx4j: dropped " + w.remote + ": no complete hello within " + Durations.format(deadline));
            closeQuietly(w.channel);
        }
    }

    /** Connections whose line is complete, deregistered (a selection flushes cancelled keys) and blocking. */
    private List<Arrival> handOver() throws IOException {
        if (leaving.isEmpty()) {
            return List.of();
        }
        selector.selectNow(); // what it selects stays in the selected set for the next call
        List<Arrival> out = new ArrayList<>(leaving.size());
        for (Waiting w : leaving) {
            try {
                w.channel.configureBlocking(true);
                out.add(new Arrival(w.channel, Arrays.copyOf(w.received, w.length)));
            } catch (IOException e) {
                closeQuietly(w.channel);
            }
        }
        leaving.clear();
        return out;
    }

    /** Closes {@code w}; {@code why} follows its address in the log line. */
    private void drop(Waiting w, String why) {
        forget(w);
        say("tcpx4j: dropped " + w.remote + why);
        closeQuietly(w.channel);
    }

    /** Writes {@code line} unless one was written less than a second ago; the next one counts those left out. */
    private void say(String line) {
        long now = System.nanoTime();
        if (now - lastLine < LINE_INTERVAL_NANOS) {
            linesLeftOut++;
            return;
        }
        lastLine = now;
        log.println(line + (linesLeftOut > 0 ? " (" + linesLeftOut + " similar lines left out since the last one)" : ""));
        linesLeftOut = 0;
    }

    private void forget(Waiting w) {
        byAge.remove(w);
        ArrayDeque<Waiting> same = byAddress.get(w.address);
        if (same != null) {
            same.remove(w);
            if (same.isEmpty()) {
                byAddress.remove(w.address);
            }
        }
    }

    /** Makes a {@link #next()} in progress, or the next one, return at once. */
    void wakeup() {
        selector.wakeup();
    }

    /** Closes every waiting connection and the selector; the server socket stays the caller's. */
    @Override
    public void close() {
        for (Waiting w : byAge) {
            closeQuietly(w.channel);
        }
        for (Waiting w : leaving) {
            closeQuietly(w.channel);
        }
        byAge.clear();
        byAddress.clear();
        leaving.clear();
        try {
            selector.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }

    private static void closeQuietly(SocketChannel s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // nothing to release
        }
    }
}
