package io.tcpx4j.nixl;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

import static io.tcpx4j.nixl.NixlArgs.descriptor;
import static io.tcpx4j.nixl.NixlArgs.requireAgent;
import static io.tcpx4j.nixl.NixlArgs.requireOut;

/**
 * The transfer handles of one {@link NixlBackend}, the stand-ins for NIXL's {@code nixlBackendReqH*}:
 * descriptor lists checked once when prepared (ranges against {@link MetadataTable}), then posted as
 * often as the caller wants until released. Running the engine's progress work is the backend's
 * business, not this table's; a check of a handle that the host polls in a loop waits here, through the
 * backend's {@link PollWait}, which each post tells when its transfer ends.
 *
 * <p>Each method answers a NIXL status or throws {@link TransferException}, which the backend turns into
 * that exception's status.
 *
 * <p>Thread-safe: handles live in a concurrent map, and the posts, checks and release of one handle are
 * serialised on that handle, so operations on different handles never wait for each other.
 */
final class TransferHandles {

    private final TransferEngine engine;
    private final MetadataTable metadata;
    private final CostModel cost;
    private final LongSupplier ids;
    private final Map<Long, Xfer> xfers = new ConcurrentHashMap<>();
    private final PollWait pollWait;
    /**
     * Tells {@link #pollWait} that a transfer ended, one instance for every transfer; null where no poll
     * ever waits, so that posts then hook nothing.
     */
    private final BiConsumer<Transfer, Throwable> ended;

    /**
     * @param ids the backend's id source, shared with {@link MetadataTable} so that no transfer handle is
     *            ever also a metadata id
     */
    TransferHandles(TransferEngine engine, MetadataTable metadata, CostModel cost, LongSupplier ids,
                    PollWait pollWait) {
        this.engine = engine;
        this.pollWait = pollWait;
        this.ended = pollWait.waits() ? (t, e) -> pollWait.signal() : null;
        this.metadata = metadata;
        this.cost = cost;
        this.ids = ids;
    }

    /** {@link NixlBackend#prepXfer}. */
    int prepare(int op, int localMem, long[] localAddr, long[] localLen, int[] localDev, long[] localMd,
                int remoteMem, long[] remoteAddr, long[] remoteLen, int[] remoteDev, long[] remoteMd,
                String remoteAgent, long[] handleOut) {
        requireOut(handleOut);
        requireAgent(remoteAgent);
        if (op != NixlBackend.OP_READ && op != NixlBackend.OP_WRITE) {
            throw new TransferException(Code.INVALID_PARAM, "operation " + op + " is neither READ nor WRITE");
        }
        int n = count(localAddr, localLen, localDev, localMd, "local");
        int m = count(remoteAddr, remoteLen, remoteDev, remoteMd, "remote");
        if (n != m) {
            throw new TransferException(Code.MISMATCH, n + " local descriptors but " + m + " remote ones");
        }
        boolean self = remoteAgent.equals(engine.name());
        List<MemoryDescriptor> local = new ArrayList<>(n);
        List<MemoryDescriptor> remote = new ArrayList<>(n);
        long bytes = 0;
        for (int i = 0; i < n; i++) {
            if (localLen[i] != remoteLen[i]) {
                throw new TransferException(Code.MISMATCH,
                        "descriptor " + i + ": " + localLen[i] + " local bytes but " + remoteLen[i] + " remote");
            }
            MemoryDescriptor l = descriptor(localAddr[i], localLen[i], localDev[i], localMem);
            MemoryDescriptor r = descriptor(remoteAddr[i], remoteLen[i], remoteDev[i], remoteMem);
            metadata.checkLocal(l, localMd[i], i);
            metadata.checkRemote(r, remoteMd[i], remoteAgent, self, i);
            local.add(l);
            remote.add(r);
            bytes += l.length();
        }
        Session session = engine.session(remoteAgent);
        long id = ids.getAsLong();
        xfers.put(id, new Xfer(op, session, List.copyOf(local), List.copyOf(remote), bytes, self, ended));
        handleOut[0] = id;
        return NixlStatus.SUCCESS;
    }

    /** {@link NixlBackend#postXfer}, without the progress work. */
    int post(long handle, byte[] notif) {
        return xfer(handle).post(notif);
    }

    /** {@link NixlBackend#checkXfer}, without the progress work. */
    int check(long handle) {
        Xfer x = xfer(handle);
        long seen = pollWait.events();
        int status = x.check();
        if (status == NixlStatus.IN_PROG && pollWait.afterEmpty(x.loop, seen)) {
            status = x.check();
        }
        if (status != NixlStatus.IN_PROG) {
            x.loop.reset();
        }
        return status;
    }

    /** {@link NixlBackend#releaseReqH}. */
    int release(long handle) {
        Xfer x = xfers.remove(handle);
        if (x == null) {
            throw new TransferException(Code.NOT_FOUND, "no transfer handle " + handle);
        }
        x.release();
        return NixlStatus.SUCCESS;
    }

    /** {@link NixlBackend#estimateXferCost}. */
    int estimate(long handle, long[] out) {
        if (out == null || out.length < 3) {
            throw new TransferException(Code.INVALID_PARAM, "need an output array of 3");
        }
        Xfer x = xfer(handle);
        long us = cost.micros(x.bytes, x.self);
        out[0] = us;
        out[1] = cost.marginMicros(us);
        out[2] = NixlBackend.COST_ANALYTICAL_BACKEND;
        return NixlStatus.SUCCESS;
    }

    /** Releases every handle, aborting transfers in flight in the background. Never blocks on a transfer. */
    void releaseAll() {
        xfers.values().forEach(Xfer::release);
        xfers.clear();
    }

    private Xfer xfer(long handle) {
        Xfer x = xfers.get(handle);
        if (x == null) {
            throw new TransferException(Code.NOT_FOUND, "no transfer handle " + handle);
        }
        return x;
    }

    private static int count(long[] addr, long[] len, int[] dev, long[] md, String side) {
        if (addr == null || len == null || dev == null || md == null) {
            throw new TransferException(Code.INVALID_PARAM, "missing " + side + " descriptor arrays");
        }
        int n = addr.length;
        if (len.length != n || dev.length != n || md.length != n) {
            throw new TransferException(Code.INVALID_PARAM, side + " descriptor arrays differ in length");
        }
        return n;
    }

    /** One prepared transfer; posts, checks and release are serialised on it. */
    private static final class Xfer {
        private final int op;
        private final Session session;
        private final List<MemoryDescriptor> local;
        private final List<MemoryDescriptor> remote;
        private final long bytes;
        private final boolean self;
        private final BiConsumer<Transfer, Throwable> ended;
        /** The host's poll loop over this handle ({@link PollWait}). */
        final PollWait.Loop loop = new PollWait.Loop();
        private Transfer current;

        Xfer(int op, Session session, List<MemoryDescriptor> local, List<MemoryDescriptor> remote, long bytes,
             boolean self, BiConsumer<Transfer, Throwable> ended) {
            this.ended = ended;
            this.op = op;
            this.session = session;
            this.local = local;
            this.remote = remote;
            this.bytes = bytes;
            this.self = self;
        }

        synchronized int post(byte[] notif) {
            if (current != null && !current.status().isTerminal()) {
                return NixlStatus.ERR_REPOST_ACTIVE;
            }
            current = op == NixlBackend.OP_WRITE ? session.write(local, remote, notif)
                    : session.read(local, remote, notif);
            loop.reset();
            if (ended != null) {
                current.completion().whenComplete(ended);
            }
            return state(current);
        }

        synchronized int check() {
            return current == null ? NixlStatus.ERR_NOT_POSTED : state(current);
        }

        synchronized void release() {
            if (current != null) {
                current.release();
            }
        }

        private static int state(Transfer t) {
            return NixlStatus.of(t.status(), t.error().orElse(null));
        }
    }
}
