package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;
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
    long bounceBase;
    /**
     * Bytes of the bounce buffer from {@link #bounceBase}: to the end of its device allocation; for a
     * bounce buffer in host memory (the test peer's), which has no allocation query, unbounded (u32
     * offsets and lengths still keep reads within 8 GiB of the base).
     */
    long bounceBytes;
    MemoryKind bounceKind = MemoryKind.DRAM;

    TcpxComm(TcpxTransport owner, long pointer) {
        this.owner = owner;
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
        Send(TcpxTransport owner, long pointer) {
            super(owner, pointer);
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
        /** The 32-byte device handle accept filled; kept alive with the comm. */
        final Memory deviceHandleBacking;
        final boolean unpack;

        Recv(TcpxTransport owner, long pointer, Memory deviceHandleBacking, boolean unpack) {
            super(owner, pointer);
            this.deviceHandleBacking = deviceHandleBacking;
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
