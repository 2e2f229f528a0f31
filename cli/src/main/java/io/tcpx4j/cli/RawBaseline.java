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
 * number of sockets on 127.0.0.1 (TCP_NODELAY), chunk k of the transfer on socket k mod S at the
 * engine's chunk size. The bench thread announces each socket's share (8 bytes) and writes the chunks
 * with blocking writes; one reader thread per socket reads its share and answers one byte; a transfer
 * ends when every socket that carried bytes has answered. A one-chunk transfer is one TCP round trip.
 *
 * <p><b>Not thread-safe</b>: one bench thread uses it. {@link #close()} ends the readers.
 */
final class RawBaseline implements AutoCloseable {

    /** The baseline's figures for one row. */
    record Result(double gbps, double avgLatencyUs, double p99LatencyUs) {
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
        this.chunkSize = chunkSize;
        this.senders = new SocketChannel[sockets];
        this.share = new long[sockets];
        this.source = ByteBuffer.allocateDirect(chunkSize);
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), sockets);
            for (int i = 0; i < sockets; i++) {
                SocketChannel s = SocketChannel.open(server.getLocalAddress());
                s.setOption(StandardSocketOptions.TCP_NODELAY, true);
                senders[i] = s;
                SocketChannel r = server.accept();
                r.setOption(StandardSocketOptions.TCP_NODELAY, true);
                receivers.add(r);
                Thread t = new Thread(() -> serve(r), "tcpx4j-raw-baseline-" + i);
                t.setDaemon(true);
                readers.add(t);
                t.start();
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
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
                latency.getValueAtPercentile(99) / 1e3);
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
