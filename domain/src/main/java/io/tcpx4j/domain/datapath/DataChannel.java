package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.util.function.Consumer;

/**
 * One data channel of a connection: a send comm to the peer and a receive comm from it, each with its
 * ring of posted requests, and their set-up (this side's listener, the peer's handle).
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class DataChannel {

    final int device;
    private final DriverSelector driver;
    final RequestRing tx = new RequestRing();
    final RequestRing rx = new RequestRing();
    private Listener listener;
    private byte[] peerHandle;
    private SendComm send;
    private RecvComm recv;

    /** Opens the channel's listener on {@code device}, for comms that {@code driver}'s thread drives. */
    DataChannel(NetTransport transport, int device, DriverSelector driver) {
        this.device = device;
        this.driver = driver;
        this.listener = transport.listen(device, driver);
    }

    /** The handle of this side's listener, for the peer. */
    byte[] handle() {
        return listener.handle();
    }

    /** Takes the peer's handle (once). */
    void peerHandle(byte[] handle) {
        if (peerHandle != null) {
            throw new TransferException(Code.REMOTE_DISCONNECT, "peer sent HANDLES twice");
        }
        peerHandle = handle;
    }

    /** Connects to the peer's handle and accepts the peer's comm, as far as they are ready; returns work done. */
    int setUp(NetTransport transport) {
        int work = 0;
        if (send == null && peerHandle != null) {
            send = transport.connect(device, peerHandle, driver);
            if (send != null) {
                work++;
            }
        }
        if (recv == null) {
            recv = transport.accept(listener);
            if (recv != null) {
                transport.closeListen(listener); // a listener yields exactly one comm
                listener = null;
                work++;
            }
        }
        return work;
    }

    SendComm send() {
        return send;
    }

    RecvComm recv() {
        return recv;
    }

    boolean ready() {
        return send != null && recv != null;
    }

    /** Number of requests this channel holds on the transport (for window and leak checks). */
    int outstanding() {
        return tx.count() + rx.count();
    }

    /** Closes the comms and the listener, ignoring failures (a failed comm may fail to close too). */
    void close(NetTransport transport) {
        closeQuietly(send, transport::closeSend);
        closeQuietly(recv, transport::closeRecv);
        closeQuietly(listener, transport::closeListen);
        send = null;
        recv = null;
        listener = null;
    }

    private static <T> void closeQuietly(T comm, Consumer<T> close) {
        if (comm != null) {
            try {
                close.accept(comm);
            } catch (RuntimeException ignored) {
                // closing a failed comm may fail too; nothing else to release
            }
        }
    }
}
