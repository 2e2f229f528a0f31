package io.tcpx4j.cli;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * The raw TCP ceiling of a bench row, measured in the same run: each transfer's bytes over the same
 * number of sockets (TCP_NODELAY), on 127.0.0.1 with readers in this process, or to readers the
 * two-host target runs ({@link #connect}, {@link #acceptReaders}); chunk k of the transfer on socket
 * k mod S at the engine's chunk size. The bench thread announces each socket's share (8 bytes) and writes the chunks
 * with blocking writes; one reader thread per socket reads its share and answers one byte; a transfer
 * ends when every socket that carried bytes has answered. A one-chunk transfer is one TCP round trip.
 *
 * <p><b>Not thread-safe</b>: one bench thread uses it. {@link #close()} ends the readers.
 */
final class RawBaseline implements AutoCloseable {

    /** The baseline's figures for one row; latencies in microseconds, the longest transfer's included. */
    record Result(double gbps, double avgLatencyUs, double p99LatencyUs, double maxLatencyUs) {
    }

    private final int chunkSize;
    private final SocketChannel[] senders;
    private final List<SocketChannel> receivers = new ArrayList<>();
    private final List<Thread> readers = new ArrayList<>();
    private final ByteBuffer source;
    private final ByteBuffer header = ByteBuffer.allocateDirect(8);
    private final ByteBuffer ack = ByteBuffer.allocateDirect(1);
    private final long[] share;

    /** Opens {@code sockets} connected socket pairs on 127.0.0.1 and starts their readers. */
    RawBaseline(int sockets, int chunkSize) throws IOException {
        this(new SocketChannel[sockets], chunkSize);
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), sockets);
            for (int i = 0; i < sockets; i++) {
                senders[i] = open(server.getLocalAddress());
                SocketChannel r = server.accept();
                r.setOption(StandardSocketOptions.TCP_NODELAY, true);
                receivers.add(r);
                readers.add(startReader(r, i));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    private RawBaseline(SocketChannel[] senders, int chunkSize) {
        this.chunkSize = chunkSize;
        this.senders = senders;
        this.share = new long[senders.length];
        this.source = ByteBuffer.allocateDirect(chunkSize);
    }

    /**
     * Connects {@code sockets} sockets to readers another process runs ({@link #acceptReaders}, the
     * two-host target): the ceiling between the two hosts.
     */
    static RawBaseline connect(InetSocketAddress readers, int sockets, int chunkSize) throws IOException {
        RawBaseline b = new RawBaseline(new SocketChannel[sockets], chunkSize);
        try {
            for (int i = 0; i < sockets; i++) {
                b.senders[i] = open(readers);
            }
            return b;
        } catch (IOException | RuntimeException e) {
            b.close();
            throw e;
        }
    }

    /**
     * The reading side for {@link #connect}: on a daemon thread, accepts {@code sockets} connections on
     * {@code server} (giving up after {@code acceptTimeoutMillis}), then closes it, and serves each with a
     * reader that ends when the initiator closes its socket.
     */
    static void acceptReaders(ServerSocketChannel server, int sockets, int acceptTimeoutMillis) {
        Thread t = new Thread(() -> {
            try (server) {
                server.socket().setSoTimeout(acceptTimeoutMillis);
                for (int i = 0; i < sockets; i++) {
                    SocketChannel r = server.socket().accept().getChannel();
                    r.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    startReader(r, i);
                }
            } catch (IOException e) {
                // the initiator did not connect them all: its baseline fails on its side
            }
        }, "tcpx4j-raw-baseline-accept");
        t.setDaemon(true);
        t.start();
    }

    private static SocketChannel open(java.net.SocketAddress at) throws IOException {
        SocketChannel s = SocketChannel.open(at);
        s.setOption(StandardSocketOptions.TCP_NODELAY, true);
        return s;
    }

    private static Thread startReader(SocketChannel r, int i) {
        Thread t = new Thread(() -> {
            try (r) {
                serve(r);
            } catch (IOException ignored) {
                // closing after the end of stream
            }
        }, "tcpx4j-raw-baseline-" + i);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Reader: per transfer, an 8-byte length, that many bytes, then one byte back. Ends at end of stream. */
    private static void serve(SocketChannel s) {
        ByteBuffer len = ByteBuffer.allocateDirect(8);
        ByteBuffer sink = ByteBuffer.allocateDirect(1 << 20);
        ByteBuffer done = ByteBuffer.allocateDirect(1);
        try {
            while (true) {
                len.clear();
                if (!readFully(s, len)) {
                    return;
                }
                long left = len.getLong(0);
                while (left > 0) {
                    sink.clear().limit((int) Math.min(sink.capacity(), left));
                    int n = s.read(sink);
                    if (n < 0) {
                        return;
                    }
                    left -= n;
                }
                done.clear();
                while (done.hasRemaining()) {
                    s.write(done);
                }
            }
        } catch (IOException e) {
            // closed under us: the baseline is over
        }
    }

    private static boolean readFully(SocketChannel s, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (s.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    /** Moves {@code warmup} then {@code iterations} transfers of {@code bytes} each, one at a time. */
    Result measure(long bytes, int warmup, int iterations) throws IOException {
        int chunks = (int) ((bytes + chunkSize - 1) / chunkSize);
        java.util.Arrays.fill(share, 0);
        for (int k = 0; k < chunks; k++) {
            share[k % senders.length] += Math.min(chunkSize, bytes - (long) k * chunkSize);
        }
        for (int i = 0; i < warmup; i++) {
            transfer(bytes, chunks);
        }
        Histogram latency = new Histogram(3_600_000_000_000L, 3);
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            transfer(bytes, chunks);
            latency.recordValue(Math.max(1, System.nanoTime() - t0));
        }
        double seconds = Math.max(1, System.nanoTime() - start) / 1e9;
        return new Result(bytes * (double) iterations / seconds / 1e9, latency.getMean() / 1e3,
                latency.getValueAtPercentile(99) / 1e3, latency.getMaxValue() / 1e3);
    }

    private void transfer(long bytes, int chunks) throws IOException {
        for (int i = 0; i < senders.length; i++) {
            if (share[i] > 0) {
                header.clear();
                header.putLong(0, share[i]);
                writeFully(senders[i], header);
            }
        }
        for (int k = 0; k < chunks; k++) {
            source.clear().limit((int) Math.min(chunkSize, bytes - (long) k * chunkSize));
            writeFully(senders[k % senders.length], source);
        }
        for (int i = 0; i < senders.length; i++) {
            if (share[i] > 0) {
                ack.clear();
                if (!readFully(senders[i], ack)) {
                    throw new IOException("the raw baseline's reader " + i + " closed its socket");
                }
            }
        }
    }

    private static void writeFully(SocketChannel s, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            s.write(b);
        }
    }

    @Override
    public void close() {
        for (SocketChannel s : senders) {
            closeQuietly(s);
        }
        for (SocketChannel r : receivers) {
            closeQuietly(r);
        }
        for (Thread t : readers) {
            try {
                t.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void closeQuietly(SocketChannel s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // nothing else to release
            }
        }
    }
}
