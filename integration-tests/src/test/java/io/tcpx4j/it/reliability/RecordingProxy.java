package io.tcpx4j.it.reliability;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A sniffer on the control stream: a TCP relay on 127.0.0.1 in front of an engine's control port that
 * records every byte each way, as someone on the path between two engines would see them. A peer is
 * pointed at it by a conn-info carrying the relay's port.
 *
 * <p>Thread-safe: recordings may be read while the relay runs.
 */
final class RecordingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final ByteArrayOutputStream fromDialer = new ByteArrayOutputStream();
    private final ByteArrayOutputStream fromAcceptor = new ByteArrayOutputStream();
    private final List<Socket> sockets = new ArrayList<>();
    private final Thread acceptor;

    RecordingProxy(String host, int port) throws IOException {
        this.target = new InetSocketAddress(host, port);
        this.server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::acceptLoop, "recording-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Everything the dialing side sent so far. */
    byte[] fromDialer() {
        synchronized (fromDialer) {
            return fromDialer.toByteArray();
        }
    }

    /** Everything the accepting side sent so far. */
    byte[] fromAcceptor() {
        synchronized (fromAcceptor) {
            return fromAcceptor.toByteArray();
        }
    }

    private void acceptLoop() {
        try {
            while (true) {
                Socket in = server.accept();
                Socket out = new Socket(target.getAddress(), target.getPort());
                in.setTcpNoDelay(true);
                out.setTcpNoDelay(true);
                synchronized (sockets) {
                    sockets.add(in);
                    sockets.add(out);
                }
                pump(in, out, fromDialer);
                pump(out, in, fromAcceptor);
            }
        } catch (IOException closed) {
            // the server socket closed: the relay is done
        }
    }

    private static void pump(Socket from, Socket to, ByteArrayOutputStream record) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    synchronized (record) {
                        record.write(buf, 0, n);
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException ended) {
                // one side closed; closing both streams passes the close on
            }
            try {
                to.close();
                from.close();
            } catch (IOException ignored) {
                // already closed
            }
        }, "recording-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
        synchronized (sockets) {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
