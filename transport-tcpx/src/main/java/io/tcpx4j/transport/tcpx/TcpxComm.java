package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.util.ArrayList;
import java.util.List;

/**
 * A plugin comm with its FIFO of 16 pooled requests and its reusable native out-parameters (one
 * block of native memory per comm, so the data path allocates nothing).
 *
 * <p>Request accounting mirrors TCPX: a send holds its slot until it tests done, a receive until it
 * is consumed. {@code posted - released} is the number of slots taken.
 *
 * <p><b>Not thread-safe</b>: one thread drives a comm at a time (the NetTransport contract).
 */
abstract class TcpxComm {

    final TcpxTransport owner;
    /** The plugin's network device the comm runs on. */
    final int device;
    final long pointer;
    final TcpxNetRequest[] ring = new TcpxNetRequest[NetTransport.MAX_REQUESTS];
    long posted;
    long completed;
    long released;
    boolean closed;
    /**
     * The failure that broke this comm, or null. TCPX has no recovery after a failed {@code test}
     * (its helper threads exit, its control socket is gone) yet still hands out requests on the comm,
     * so the adapter remembers the failure and reports it for every later post and test.
     */
    TransferException failure;
    final List<TcpxRegistration> registrations = new ArrayList<>();
    /**
     * The comm's out-parameters and irecv's one-element arrays, at the addresses below; JNA frees
     * it when the comm is collected, after the plugin's last call on it.
     */
    private final Memory scratch = new Memory(SCRATCH_BYTES);
    /** isend's and irecv's {@code void** request}, and regMr's {@code void** mhandle}. */
    final long outSlot;
    /** test's {@code int* done}. */
    final long doneSlot;
    /** test's {@code int* sizes} (TCPX never writes it). */
    final long testSizeSlot;
    /** irecv's {@code void* data[1]}, {@code void* mhandles[1]}, {@code int sizes[1]}, {@code int tags[1]}. */
    final long recvData;
    final long recvMhandles;
    final long recvSizes;
    final long recvTags;
    /** Base of the receive comm's bounce buffer, read at its first receive into CUDA memory; 0 before. */
    long bounceBase;
    /**
     * Bytes of the bounce buffer from {@link #bounceBase}: to the end of its device allocation; for a
     * bounce buffer in host memory (the test peer's), which has no allocation query, unbounded (u32
     * offsets and lengths still keep reads within 8 GiB of the base).
     */
    long bounceBytes;
    MemoryKind bounceKind = MemoryKind.DRAM;

    private static final int SCRATCH_BYTES = 40;

    TcpxComm(TcpxTransport owner, int device, long pointer) {
        this.owner = owner;
        this.device = device;
        this.pointer = pointer;
        scratch.clear();
        long base = Pointer.nativeValue(scratch);
        outSlot = base;
        doneSlot = base + 8;
        testSizeSlot = base + 12;
        recvData = base + 16;
        recvMhandles = base + 24;
        recvSizes = base + 32;
        recvTags = base + 36;
        for (int i = 0; i < ring.length; i++) {
            ring[i] = new TcpxNetRequest(this);
        }
    }

    int outstanding() {
        return (int) (posted - released);
    }

    /** The oldest request that has not tested done, or null. */
    TcpxNetRequest testHead() {
        return completed == posted ? null : ring[(int) (completed % ring.length)];
    }

    /** The oldest completed request whose slot is still held (receives until consumed), or null. */
    TcpxNetRequest releaseHead() {
        return released == completed ? null : ring[(int) (released % ring.length)];
    }

    TcpxNetRequest next() {
        return ring[(int) (posted % ring.length)];
    }

    abstract boolean receiving();

    /** Remembers the first failure of the data path (misuse aside) and returns it; see {@link #failure}. */
    TransferException failed(TransferException e) {
        if (failure == null && e.code() != TransferException.Code.INVALID_PARAM) {
            failure = e;
        }
        return e;
    }

    void throwIfFailed() {
        if (failure != null) {
            throw new TransferException(failure.code(), this + " failed before: " + failure.getMessage(), failure);
        }
    }

    void checkOpen() {
        if (closed) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, this + " is closed");
        }
    }

    static final class Send extends TcpxComm implements SendComm {
        Send(TcpxTransport owner, int device, long pointer) {
            super(owner, device, pointer);
        }

        @Override
        boolean receiving() {
            return false;
        }

        @Override
        public String toString() {
            return "tcpx send comm 0x" + Long.toHexString(pointer);
        }
    }

    static final class Recv extends TcpxComm implements RecvComm {
        /** The 32-byte device handle accept filled (inside its backing, kept alive with the comm). */
        final Memory deviceHandleBacking;
        final Pointer deviceHandle;
        /** Receives into CUDA memory land in bounce pages (UNPACK device handle, irecvConsumed present). */
        final boolean unpack;

        Recv(TcpxTransport owner, int device, long pointer, Memory deviceHandleBacking, Pointer deviceHandle,
             boolean unpack) {
            super(owner, device, pointer);
            this.deviceHandleBacking = deviceHandleBacking;
            this.deviceHandle = deviceHandle;
            this.unpack = unpack;
        }

        @Override
        boolean receiving() {
            return true;
        }

        @Override
        public String toString() {
            return "tcpx recv comm 0x" + Long.toHexString(pointer) + (unpack ? " (unpack)" : "");
        }
    }
}
