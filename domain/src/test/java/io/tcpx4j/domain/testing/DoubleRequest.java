package io.tcpx4j.domain.testing;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;

/**
 * A posted isend or irecv of an {@link InMemoryNetTransportDouble}. Never pooled, unlike real
 * transports' requests: a request the engine keeps past its end stays recognisable as void and every
 * later use fails, instead of silently aliasing a newer request.
 *
 * <p>The fragment accessors are valid only between "tested done" and "consumed" of a receive, as
 * the {@link NetRequest} contract says; anywhere else they throw INVALID_PARAM rather than return
 * what TCPX would (garbage).
 *
 * <p>Thread-safe accessors; mutable state is guarded by the lock of its comm's {@link CommPair}.
 */
final class DoubleRequest implements NetRequest {

    enum State {
        /** Posted, data not moved yet. */
        POSTED,
        /** Matched and data moved; test will report it. */
        LANDED,
        /** A receive reported done by test, waiting for consume. */
        REPORTED,
        /** Finished (send reported done, receive consumed, failure thrown, comm closed). */
        VOID
    }

    final DoubleComm comm;
    final long address;
    final int size;
    final DoubleRegistration registration;
    State state = State.POSTED;
    /** A failure of this request alone (truncation); the pair's failure is kept on the pair. */
    TransferException.Code failure;
    String failureReason;
    /** Landed before a drop-after-bytes fault broke the connection: still completes. */
    boolean landedBeforeDrop;
    /** Bytes the matched send carried (receives); at most {@link #size}. */
    int receivedSize;
    /** Devmem receives: pages (index j holds bytes [j*4K, (j+1)*4K)), table slot, fragment count. */
    int[] pages;
    int table = -1;
    int fragmentCount;

    DoubleRequest(DoubleComm comm, long address, int size, DoubleRegistration registration) {
        this.comm = comm;
        this.address = address;
        this.size = size;
        this.registration = registration;
    }

    /** The posted size; the bytes actually received are in {@link #receivedSize} (TCPX's test never reports them). */
    @Override
    public int size() {
        return size;
    }

    @Override
    public int fragmentCount() {
        synchronized (comm.pair) {
            checkUnpackable();
            return fragmentCount;
        }
    }

    @Override
    public long fragmentsAddress() {
        synchronized (comm.pair) {
            checkUnpackable();
            return table < 0 ? 0 : ((DoubleComm.Recv) comm).pool.tableAddress(table);
        }
    }

    @Override
    public long bounceBase() {
        synchronized (comm.pair) {
            checkUnpackable();
            return table < 0 ? 0 : ((DoubleComm.Recv) comm).pool.base;
        }
    }

    @Override
    public long bounceBytes() {
        synchronized (comm.pair) {
            checkUnpackable();
            return table < 0 ? 0 : (long) ((DoubleComm.Recv) comm).pool.pages * NativeMemory.PAGE;
        }
    }

    @Override
    public MemoryKind bounceKind() {
        synchronized (comm.pair) {
            checkUnpackable();
            return MemoryKind.DRAM;
        }
    }

    private void checkUnpackable() {
        if (comm.isSend()) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "fragments of a send requested: only receives have fragments");
        }
        if (state != State.REPORTED) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "fragments of a receive read while "
                    + (state == State.VOID ? "void (consumed, failed or closed)" : "not tested done yet"));
        }
    }

    @Override
    public String toString() {
        return (comm.isSend() ? "isend" : "irecv") + "[" + size + " B, " + state + ", " + comm + "]";
    }
}
