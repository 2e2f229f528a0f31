package io.tcpx4j.domain.testing;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.Listener;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The "network" that {@link InMemoryNetTransportDouble}s share: listeners by handle, the
 * connections between transports, and the test's levers over them (pumping by hand, faults,
 * counters). Give each engine of a test its own transport from one fabric, as each process would
 * have its own TCPX plugin:
 *
 * <pre>{@code
 * try (InMemoryFabric fabric = new InMemoryFabric()) {
 *     InMemoryNetTransportDouble a = fabric.newTransport();
 *     InMemoryNetTransportDouble b = fabric.newTransport(Config.defaults().without(Capability.DEVMEM_RECEIVE));
 *     ...
 * }
 * }</pre>
 *
 * <p>Deterministic: bounce-page placement, fragment order and handle nonces come from the seed, and
 * data moves only when someone tests a request or calls {@link #progress()}. Thread interleavings
 * are the only source of variation.
 *
 * <p><b>Thread-safe.</b> Two engines in one JVM may each run their own progress thread over one
 * fabric: the listener registry is guarded by this fabric's monitor, each connection by its own
 * monitor (shared by its two sides), and a transport's bookkeeping by concurrent collections.
 */
public final class InMemoryFabric implements AutoCloseable {

    /** The seed of {@link #InMemoryFabric()}: fixed, so a failing run replays. */
    public static final long DEFAULT_SEED = 0x7C9F4A11L;

    private static final int HANDLE_MAGIC = 0x54584d44; // "TXMD"
    private static final int HANDLE_VERSION = 1;
    private static final AtomicLong FABRIC_IDS = new AtomicLong();

    private final long fabricId = FABRIC_IDS.incrementAndGet();
    private final SplittableRandom random;
    private final Map<Long, DoubleListener> listeners = new HashMap<>();
    private final List<CommPair> pairs = new ArrayList<>();
    private final List<InMemoryNetTransportDouble> transports = new CopyOnWriteArrayList<>();
    private long nextId;

    public InMemoryFabric() {
        this(DEFAULT_SEED);
    }

    public InMemoryFabric(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /** A new transport with {@link InMemoryNetTransportDouble.Config#defaults()}. */
    public InMemoryNetTransportDouble newTransport() {
        return newTransport(InMemoryNetTransportDouble.Config.defaults());
    }

    /** A new transport on this fabric; closing the fabric closes it. */
    public InMemoryNetTransportDouble newTransport(InMemoryNetTransportDouble.Config config) {
        InMemoryNetTransportDouble transport = new InMemoryNetTransportDouble(this, config);
        transports.add(transport);
        return transport;
    }

    /**
     * One progress step of the whole network: matches posted sends with posted receives on every
     * connection and moves their data. Tests call it to let data land without testing (then assert
     * e.g. that the destination is untouched before unpack); engines need not, as their test calls
     * pump their own connections. Returns the matches made (0: nothing to do).
     */
    public int progress() {
        List<CommPair> snapshot;
        synchronized (this) {
            pairs.removeIf(p -> {
                synchronized (p) {
                    return p.retired();
                }
            });
            snapshot = new ArrayList<>(pairs);
        }
        int work = 0;
        for (CommPair p : snapshot) {
            synchronized (p) {
                work += p.pump();
            }
        }
        return work;
    }

    /**
     * Fault: breaks the connection {@code comm} belongs to (either side may be given). Every request
     * of both sides not yet reported done then fails its test with REMOTE_DISCONNECT, and new isends
     * and irecvs on it throw REMOTE_DISCONNECT. Received requests already reported done can still be
     * consumed; the comms stay alive until closed (leak checks expect the engine to close them).
     */
    public void breakConnection(Comm comm) {
        CommPair p = pairOf(comm);
        synchronized (p) {
            p.breakPair("fault injected: connection broken");
        }
    }

    /** Fault: {@link #breakConnection} for every connection of this fabric, made or being made. */
    public void breakAll() {
        List<CommPair> snapshot;
        synchronized (this) {
            snapshot = new ArrayList<>(pairs);
        }
        for (CommPair p : snapshot) {
            synchronized (p) {
                p.breakPair("fault injected: every connection broken");
            }
        }
    }

    /**
     * Fault: the connection of {@code comm} drops when a message would carry its total past
     * {@code bytes} more bytes from now. Messages are whole: the one that would cross the limit is not
     * delivered. Messages delivered before the drop still complete on both sides; every later
     * request fails its test with REMOTE_DISCONNECT, as after {@link #breakConnection}.
     */
    public void dropAfterBytes(Comm comm, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes < 0");
        }
        CommPair p = pairOf(comm);
        synchronized (p) {
            p.dropAfterBytes = p.bytesDelivered + bytes;
        }
    }

    /** Comms of every transport of this fabric that are open (returned by connect/accept, not closed). */
    public int commsAlive() {
        return transports.stream().mapToInt(InMemoryNetTransportDouble::commsAlive).sum();
    }

    /** Live registrations of every transport of this fabric. */
    public int registrationsAlive() {
        return transports.stream().mapToInt(InMemoryNetTransportDouble::registrationsAlive).sum();
    }

    /** Open listeners of every transport of this fabric. */
    public int listenersAlive() {
        return transports.stream().mapToInt(InMemoryNetTransportDouble::listenersAlive).sum();
    }

    /** Bounce pages held by unconsumed receives of every transport of this fabric. */
    public int bouncePagesHeld() {
        return transports.stream().mapToInt(InMemoryNetTransportDouble::bouncePagesHeld).sum();
    }

    /** Closes every transport of this fabric (frees their native memory). Idempotent. */
    @Override
    public void close() {
        for (InMemoryNetTransportDouble t : transports) {
            t.close();
        }
    }

    private CommPair pairOf(Comm comm) {
        if (!(comm instanceof DoubleComm c) || c.owner.fabric() != this) {
            throw new IllegalArgumentException(comm + " is no comm of this fabric");
        }
        return c.pair;
    }

    // ---- used by the transports ----

    synchronized DoubleListener newListener(InMemoryNetTransportDouble owner, int device) {
        long id = ++nextId;
        byte[] handle = new byte[Listener.HANDLE_SIZE];
        ByteBuffer b = ByteBuffer.wrap(handle);
        b.putInt(HANDLE_MAGIC).putInt(HANDLE_VERSION).putLong(fabricId).putLong(id);
        // The rest is a nonce: a handle copied from an earlier run or another fabric never matches.
        while (b.hasRemaining()) {
            b.put((byte) random.nextInt(256));
        }
        DoubleListener listener = new DoubleListener(id, device, owner, handle);
        listeners.put(id, listener);
        return listener;
    }

    /** Starts a connection to the listener a handle names and queues it for accept. */
    synchronized CommPair openPair(byte[] handle) {
        ByteBuffer b = ByteBuffer.wrap(handle);
        if (b.getInt() != HANDLE_MAGIC || b.getInt() != HANDLE_VERSION || b.getLong() != fabricId) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "not a connection handle of this fabric (corrupt, or from another fabric)");
        }
        DoubleListener listener = listeners.get(b.getLong());
        if (listener == null || !listener.matches(handle)) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "connection handle names no open listener (corrupt, or the listener closed)");
        }
        CommPair pair = new CommPair(++nextId, listener, random.split());
        pairs.add(pair);
        listener.waitingForAccept.addLast(pair);
        return pair;
    }

    synchronized CommPair pollAccept(DoubleListener listener) {
        if (listener.closed) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, listener + " is closed");
        }
        return listener.waitingForAccept.pollFirst();
    }

    synchronized void closeListener(DoubleListener listener) {
        listeners.remove(listener.id);
        listener.closed = true;
        for (CommPair p : listener.waitingForAccept) {
            synchronized (p) {
                p.breakPair("the listener closed before accepting this connection");
            }
        }
        listener.waitingForAccept.clear();
    }
}
