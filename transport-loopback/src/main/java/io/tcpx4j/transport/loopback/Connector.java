package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.DriverSelector;
import io.tcpx4j.domain.port.out.Listener;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.security.SecureRandom;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Connection set-up for one transport: listeners and their handles, connects in progress keyed by the
 * handle they dial, and the hand-over of finished connections. A comm it returns is the caller's to
 * track; the connector keeps nothing of it.
 *
 * <p>Thread-safe: listeners and pending connects live in concurrent collections, and each listener or
 * connect does its socket work on the I/O loop it was given.
 */
final class Connector {

    private static final SecureRandom RANDOM = new SecureRandom();

    /** What listeners and connects pass on to the comms they make, and where they announce progress. */
    private final CommSupport support;
    private final LoopbackConfig config;
    private final IoLoops loops;
    private final Set<LoopbackListener> listeners = ConcurrentHashMap.newKeySet();
    private final Map<ByteBuffer, PendingConnect> connecting = new ConcurrentHashMap<>();

    Connector(CommSupport support, IoLoops loops) {
        this.support = support;
        this.config = support.config();
        this.loops = loops;
    }

    /** A listener whose sockets, and its comm's, {@code driver}'s thread moves where the transport has no I/O threads. */
    Listener listen(int device, DriverSelector driver) {
        LoopbackListener.checkDevice(device, config.devices());
        InetAddress host;
        try {
            host = InetAddress.getByName(config.bindHost());
        } catch (UnknownHostException e) {
            throw new TransferException(Code.INVALID_PARAM, "bindHost " + config.bindHost() + " does not resolve", e);
        }
        ServerSocketChannel server = null;
        try {
            server = ServerSocketChannel.open();
            server.configureBlocking(false);
            server.bind(new InetSocketAddress(host, 0), 64);
            InetSocketAddress local = (InetSocketAddress) server.getLocalAddress();
            byte[] nonce = new byte[HandleCodec.NONCE_BYTES];
            RANDOM.nextBytes(nonce);
            byte[] handle = HandleCodec.encode(local, config.socketsPerComm(), device, nonce);
            if (config.faults().corruptHandle()) {
                handle = HandleCodec.corrupt(handle);
            }
            Loop loop = loops.next(driver);
            LoopbackListener l = new LoopbackListener(support, loop, server, nonce, handle);
            listeners.add(l);
            loop.execute(l::register);
            return l;
        } catch (IOException e) {
            if (server != null) {
                Sockets.closeQuietly(server); // reporting the bind failure matters more
            }
            throw new TransferException(Code.BACKEND, "cannot listen on " + config.bindHost() + ": " + e, e);
        }
    }

    /** The connected comm, or {@code null} while the connect to {@code handle} is under way. */
    LoopbackSendComm connect(int device, byte[] handle, DriverSelector driver) {
        LoopbackListener.checkDevice(device, config.devices());
        HandleCodec.Handle decoded = HandleCodec.decode(handle);
        ByteBuffer key = ByteBuffer.wrap(handle.clone());
        PendingConnect p = connecting.get(key);
        if (p == null) {
            p = new PendingConnect(support, loops.next(driver), decoded, RANDOM.nextLong());
            connecting.put(key, p);
            PendingConnect started = p;
            p.loopExecute(started::start);
            return null;
        }
        p.progress();
        TransferException f = p.failure;
        if (f != null) {
            connecting.remove(key);
            throw new TransferException(f.code(), p.failureMessage, f);
        }
        LoopbackSendComm c = p.comm;
        if (c == null) {
            return null;
        }
        connecting.remove(key);
        return c;
    }

    /** The listener's one comm once its connection is complete, else {@code null}. */
    LoopbackRecvComm accept(Listener listener) {
        LoopbackListener l = listener(listener);
        if (l.closed) {
            throw new TransferException(Code.INVALID_PARAM, "listener is closed");
        }
        if (l.yielded) {
            // as TCPX, whose accept frees its state on success: a second accept would double-free
            throw new TransferException(Code.INVALID_PARAM, "listener already yielded its comm: a listener yields exactly one");
        }
        LoopbackRecvComm c = l.poll();
        if (c != null) {
            l.yielded = true;
        }
        return c;
    }

    void closeListen(Listener listener) {
        LoopbackListener l = listener(listener);
        l.close();
        listeners.remove(l);
    }

    /** Closes every listener and abandons every connect in progress; the transport is closing. */
    void close() {
        for (LoopbackListener l : listeners) {
            l.close();
        }
        listeners.clear();
        for (PendingConnect p : connecting.values()) {
            p.loopExecute(p::abandon);
        }
        connecting.clear();
    }

    private LoopbackListener listener(Listener listener) {
        if (!(listener instanceof LoopbackListener l) || !listeners.contains(l)) {
            throw new TransferException(Code.INVALID_PARAM, "not an open listener of this transport: " + listener);
        }
        return l;
    }
}
