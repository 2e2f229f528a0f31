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
 * A plugin comm with its FIFO of 16 pooled requests and its reusable native out-parameters (JNA
 * {@link Memory} per comm, so the data path allocates no native memory).
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
    /** request** for isend/irecv, and regMr's mhandle**. */
    final Memory out = new Memory(8);
    /** test's int* done and int* size (TCPX never writes the size). */
    final Memory done = new Memory(4);
    final Memory testSize = new Memory(4);
    /** Base of the receive comm's bounce buffer, read at its first receive into CUDA memory; 0 before. */
    long bounceBase;
    /**
     * Bytes of the bounce buffer from {@link #bounceBase}: to the end of its device allocation; for a
     * bounce buffer in host memory (the test peer's), which has no allocation query, unbounded (u32
     * offsets and lengths still keep reads within 8 GiB of the base).
     */
    long bounceBytes;
    MemoryKind bounceKind = MemoryKind.DRAM;

    TcpxComm(TcpxTransport owner, int device, long pointer) {
        this.owner = owner;
        this.device = device;
        this.pointer = pointer;
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
        /** irecv's one-element arrays: data[], sizes[], tags[], mhandles[]. */
        final Memory data = new Memory(8);
        final Memory sizes = new Memory(4);
        final Memory tags = new Memory(4);
        final Memory mhandles = new Memory(8);
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
