package io.tcpx4j.domain.control;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.idle.IdleSelector;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The engine's control listener: the TCP socket peers dial, bound at start; the agent's readiness selector
 * tells when a connection waits to be accepted.
 *
 * <p><b>Not thread-safe</b>: bound under the engine's lock, then owned by the agent.
 */
public final class ControlListener {

    private static final System.Logger LOG = System.getLogger(ControlListener.class.getName());
    private static final int ACCEPTS_PER_POLL = 4;

    private final ServerSocketChannel server;
    private final String advertiseHost;
    private final int port;

    private ControlListener(ServerSocketChannel server, String advertiseHost, int port) {
        this.server = server;
        this.advertiseHost = advertiseHost;
        this.port = port;
    }

    /**
     * Binds {@code config}'s listen host on {@code port} (0: any free port) and lets {@code readiness} watch
     * it, running {@code onAcceptable} when a wait or a poll finds a connection to accept.
     */
    public static ControlListener bind(EngineConfig config, int port, IdleSelector readiness, Runnable onAcceptable) {
        try {
            InetAddress listen = InetAddress.getByName(config.listenHost());
            String advertise = config.advertiseHost() != null ? config.advertiseHost() : config.listenHost();
            if (config.advertiseHost() == null && listen.isAnyLocalAddress()) {
                throw new TransferException(Code.INVALID_PARAM, "listening on the wildcard address "
                        + config.listenHost() + ": set advertiseHost to an address peers can reach");
            }
            ServerSocketChannel s = ServerSocketChannel.open();
            try {
                s.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                s.bind(new InetSocketAddress(listen, port));
                s.configureBlocking(false);
                readiness.watch(s, SelectionKey.OP_ACCEPT, onAcceptable);
                return new ControlListener(s, advertise, ((InetSocketAddress) s.getLocalAddress()).getPort());
            } catch (IOException | RuntimeException e) {
                s.close();
                throw e;
            }
        } catch (IOException e) {
            String where = port == 0 ? config.listenHost() + " (any port)" : config.listenHost() + ":" + port;
            throw new TransferException(Code.BACKEND, "cannot listen on " + where + ": " + e.getMessage(), e);
        }
    }

    /** The host written into conn-info. */
    public String advertiseHost() {
        return advertiseHost;
    }

    public int port() {
        return port;
    }

    /** Takes an accepted control socket. */
    public interface Acceptor {
        /** Wraps {@code socket}; an IOException closes it. */
        void accepted(SocketChannel socket) throws IOException;
    }

    /**
     * Hands up to a few waiting control connections to {@code acceptor}; returns how many. Called when the
     * agent's readiness found one waiting: an accept that finds none still makes and frees a socket in the
     * kernel.
     */
    public int acceptInto(Acceptor acceptor, String engineName) {
        int work = 0;
        for (int i = 0; i < ACCEPTS_PER_POLL; i++) {
            SocketChannel s;
            try {
                s = server.accept();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "accept failed on {0}: {1}", engineName, e.getMessage());
                return work;
            }
            if (s == null) {
                return work;
            }
            try {
                acceptor.accepted(s);
                work++;
            } catch (IOException e) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // already broken
                }
            }
        }
        return work;
    }

    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // nothing to release beyond the socket
        }
    }
}
