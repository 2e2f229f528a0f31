package io.tcpx4j.domain.testing;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;

import java.util.ArrayDeque;
import java.util.SplittableRandom;

/**
 * The connection between one send comm and one recv comm of an {@link InMemoryFabric}: the matching
 * queues, the data movement and the connection's fate (broken, closed by either side).
 *
 * <p>Matching is strictly positional, like TCPX's byte stream: the n-th send posted meets the n-th
 * receive posted, whatever their tags. Data moves only in {@link #pump()}, which runs inside a later
 * {@code test} of either side or {@link InMemoryFabric#progress()}, never inside a posting call.
 *
 * <p><b>Thread-safe by its monitor</b>: every field here, and the mutable state of both comms, their
 * requests, registrations and bounce pool, is guarded by {@code synchronized (pair)}. The two sides
 * usually belong to different engines with their own progress threads, so this is the one lock they
 * share. Lock order: fabric, then a transport's pending-connect list, then a pair; never the reverse.
 */
final class CommPair {

    final long id;
    final DoubleListener listener;
    final SplittableRandom random;
    /** Null until connect returned it to the connecting side. */
    DoubleComm.Send send;
    /** Null until the listening side accepted. */
    DoubleComm.Recv recv;
    /** Further connect calls that still answer "not yet". */
    int connectNotYetLeft;

    final ArrayDeque<DoubleRequest> unmatchedSends = new ArrayDeque<>();
    final ArrayDeque<DoubleRequest> unmatchedRecvs = new ArrayDeque<>();

    /** Why the connection broke (fault hook, truncation, listener closed), or null while healthy. */
    String brokenReason;
    boolean sendClosed;
    boolean recvClosed;
    /** Bytes after which an injected fault drops the connection; -1 when none is set. */
    long dropAfterBytes = -1;
    long bytesDelivered;

    CommPair(long id, DoubleListener listener, SplittableRandom random) {
        this.id = id;
        this.listener = listener;
        this.random = random;
    }

    boolean broken() {
        return brokenReason != null;
    }

    boolean healthy() {
        return !broken() && !sendClosed && !recvClosed;
    }

    void breakPair(String reason) {
        if (brokenReason == null) {
            brokenReason = reason;
        }
        // Nothing moves any more; the requests stay in their comms' FIFOs and fail when tested.
        unmatchedSends.clear();
        unmatchedRecvs.clear();
    }

    /** Both sides gone: nothing can happen on this pair any more. */
    boolean retired() {
        boolean sendGone = sendClosed || (send == null && broken());
        boolean recvGone = recvClosed || (recv == null && broken());
        return sendGone && recvGone;
    }

    /** Matches posted sends with posted receives and moves their data. Returns the matches made. */
    int pump() {
        if (!healthy() || send == null || recv == null) {
            return 0;
        }
        int work = 0;
        while (!unmatchedSends.isEmpty() && !unmatchedRecvs.isEmpty()) {
            DoubleRequest s = unmatchedSends.peekFirst();
            DoubleRequest r = unmatchedRecvs.peekFirst();
            if (s.size > r.size) {
                unmatchedSends.pollFirst();
                unmatchedRecvs.pollFirst();
                r.failure = TransferException.Code.BACKEND;
                r.failureReason = "message truncated: the matched send carries " + s.size
                        + " bytes, the receive was posted for " + r.size;
                // A byte stream that lost a message boundary is out of step for good; TCPX drops it.
                breakPair("the receiver rejected a truncated message (" + s.size + " > " + r.size + " bytes)");
                return work + 1;
            }
            if (dropAfterBytes >= 0 && bytesDelivered + s.size > dropAfterBytes) {
                // What got through before the drop completes on both sides, as it would on a socket.
                markLanded(send);
                markLanded(recv);
                breakPair("fault injected: connection dropped after " + bytesDelivered + " bytes");
                return work + 1;
            }
            if (!deliver(s, r)) {
                // Every bounce page is held by unconsumed receives: wait for consumes, like TCPX.
                break;
            }
            unmatchedSends.pollFirst();
            unmatchedRecvs.pollFirst();
            bytesDelivered += s.size;
            work++;
        }
        return work;
    }

    private static void markLanded(DoubleComm side) {
        for (DoubleRequest r : side.unreported) {
            if (r.state == DoubleRequest.State.LANDED) {
                r.landedBeforeDrop = true;
            }
        }
    }

    private boolean deliver(DoubleRequest s, DoubleRequest r) {
        int n = s.size;
        InMemoryNetTransportDouble receiver = recv.owner;
        if (receiver.devmem() && n > 0) {
            if (recv.pool == null) {
                recv.pool = new BouncePool(receiver.config().bouncePagesPerRecvComm());
            }
            BouncePool pool = recv.pool;
            int pieces = (n + NativeMemory.PAGE - 1) / NativeMemory.PAGE;
            if (pool.freePages() < pieces) {
                return false;
            }
            int[] pages = new int[pieces];
            for (int j = 0; j < pieces; j++) {
                pages[j] = pool.takePage(random);
                long offset = (long) j * NativeMemory.PAGE;
                NativeMemory.copy(s.address + offset, pool.pageAddress(pages[j]),
                        Math.min(NativeMemory.PAGE, n - offset));
            }
            int table = pool.takeTable();
            long records = pool.tableAddress(table);
            int[] order = permutation(pieces);
            for (int i = 0; i < pieces; i++) {
                int j = order[i];
                long dstOff = (long) j * NativeMemory.PAGE;
                long rec = records + (long) i * NetRequest.FRAGMENT_BYTES;
                NativeMemory.putInt(rec, pages[j] * NativeMemory.PAGE);
                NativeMemory.putInt(rec + 4, (int) Math.min(NativeMemory.PAGE, n - dstOff));
                NativeMemory.putLong(rec + 8, dstOff);
            }
            r.pages = pages;
            r.table = table;
            r.fragmentCount = pieces;
        } else {
            NativeMemory.copy(s.address, r.address, n);
        }
        r.receivedSize = n;
        r.state = DoubleRequest.State.LANDED;
        s.state = DoubleRequest.State.LANDED;
        return true;
    }

    private int[] permutation(int n) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int k = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[k];
            order[k] = t;
        }
        return order;
    }

    /**
     * Why testing an unreported request must throw now, or null. A broken connection fails every
     * unreported request except those delivered before a {@link #dropAfterBytes} drop. A receive fails
     * once the sender
     * closed even if its data landed (TCPX: closing the send comm before the receiver finished makes
     * the receiver's test fail); a send whose data landed still completes after the receiver closed.
     */
    TransferException failureOf(DoubleRequest request) {
        if (request.failure != null) {
            return new TransferException(request.failure, request.failureReason);
        }
        if (broken() && !request.landedBeforeDrop) {
            return new TransferException(TransferException.Code.REMOTE_DISCONNECT, brokenReason);
        }
        if (request.comm.isSend() && recvClosed && request.state != DoubleRequest.State.LANDED) {
            return new TransferException(TransferException.Code.REMOTE_DISCONNECT, "the peer closed its recv comm");
        }
        if (!request.comm.isSend() && sendClosed) {
            return new TransferException(TransferException.Code.REMOTE_DISCONNECT, "the peer closed its send comm");
        }
        return null;
    }

    /** Gives back everything a request holds: its slot, its registration use, its bounce pages. */
    void release(DoubleRequest request) {
        if (request.state == DoubleRequest.State.VOID) {
            return;
        }
        request.comm.outstanding--;
        request.registration.inFlight--;
        if (request.pages != null) {
            BouncePool pool = ((DoubleComm.Recv) request.comm).pool;
            for (int page : request.pages) {
                pool.returnPage(page);
            }
            pool.returnTable(request.table);
            request.pages = null;
            request.table = -1;
        }
        request.state = DoubleRequest.State.VOID;
    }

    /** Closes one side: its requests become void, its registrations dropped, its pool freed. */
    void closeSide(DoubleComm comm) {
        for (DoubleRequest r : comm.unreported) {
            release(r);
        }
        comm.unreported.clear();
        if (comm instanceof DoubleComm.Recv recvSide) {
            for (DoubleRequest r : recvSide.unconsumed) {
                release(r);
            }
            recvSide.unconsumed.clear();
            unmatchedRecvs.clear();
            recvClosed = true;
            if (recvSide.pool != null) {
                recvSide.pool.free();
                recvSide.pool = null;
            }
        } else {
            unmatchedSends.clear();
            sendClosed = true;
        }
        for (DoubleRegistration reg : comm.registrations) {
            reg.alive = false;
        }
        comm.registrations.clear();
        comm.closed = true;
    }
}
