package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.registration.RegistrationGroup;

import java.util.Iterator;
import java.util.Set;
import java.util.function.IntUnaryOperator;

/**
 * The data channels of one connection and their set-up: each side listens once per channel, the
 * handles travel over the control stream, each side connects to the peer's handles and accepts the
 * peer's connection on its own listener (a listener yields exactly one comm, then is closed).
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent, except {@link #outstandingRequests()}.
 */
public final class DataChannels {

    private static final System.Logger LOG = System.getLogger(DataChannels.class.getName());

    private final NetTransport transport;
    private final DataChannel[] channels;
    private boolean ready;

    /**
     * Opens a listener per channel on the device {@code deviceFor} maps it to; the comms are driven by
     * {@code driver}'s thread.
     */
    public DataChannels(NetTransport transport, int count, IntUnaryOperator deviceFor, DriverSelector driver) {
        this.transport = transport;
        DataChannel[] chs = new DataChannel[count];
        try {
            for (int i = 0; i < count; i++) {
                chs[i] = new DataChannel(transport, deviceFor.applyAsInt(i), driver);
            }
        } catch (RuntimeException e) {
            for (DataChannel ch : chs) {
                if (ch != null) {
                    ch.close(transport);
                }
            }
            throw e;
        }
        this.channels = chs;
    }

    int size() {
        return channels.length;
    }

    DataChannel get(int i) {
        return channels[i];
    }

    /** The listeners' handles, for the peer. */
    public byte[][] handles() {
        byte[][] handles = new byte[channels.length][];
        for (int i = 0; i < channels.length; i++) {
            handles[i] = channels[i].handle();
        }
        return handles;
    }

    /** Takes the peer's handles (one per channel, once). */
    void peerHandles(byte[][] handles) {
        if (handles.length != channels.length) {
            throw disconnect("peer sent " + handles.length + " handles for " + channels.length + " channels");
        }
        for (int i = 0; i < channels.length; i++) {
            channels[i].peerHandle(handles[i]);
        }
    }

    public boolean isReady() {
        return ready;
    }

    /** Connects and accepts the channels' comms; returns work done. {@link #isReady()} once all are up. */
    public int setUp(String engineName, String peerName) {
        int work = 0;
        boolean all = true;
        for (DataChannel ch : channels) {
            work += ch.setUp(transport);
            all &= ch.ready();
        }
        if (all) {
            ready = true;
            LOG.log(System.Logger.Level.DEBUG, "{0}: {1} channels up to {2}", engineName, channels.length, peerName);
        }
        return work;
    }

    /** Drops the registrations of the groups in {@code registered} that were retired, and those groups from it. */
    void dropRetired(Set<RegistrationGroup> registered) {
        for (Iterator<RegistrationGroup> it = registered.iterator(); it.hasNext(); ) {
            RegistrationGroup g = it.next();
            if (g.isRetired()) {
                forget(g);
                it.remove();
            }
        }
    }

    /** Drops the group's registrations on every comm. */
    private void forget(RegistrationGroup g) {
        for (DataChannel ch : channels) {
            if (ch.send() != null) {
                g.forget(transport, ch.send());
            }
            if (ch.recv() != null) {
                g.forget(transport, ch.recv());
            }
        }
    }

    /** Drops the registrations of {@code registered} on every comm and closes the comms. */
    void close(Set<RegistrationGroup> registered) {
        for (RegistrationGroup g : registered) {
            forget(g);
        }
        for (DataChannel ch : channels) {
            ch.close(transport);
        }
    }

    /** Requests held on the transport right now; a racy read from any thread (for stats and leak checks). */
    public int outstandingRequests() {
        int n = 0;
        for (DataChannel ch : channels) {
            n += ch.outstanding();
        }
        return n;
    }

    private static TransferException disconnect(String message) {
        return new TransferException(Code.REMOTE_DISCONNECT, message);
    }
}
