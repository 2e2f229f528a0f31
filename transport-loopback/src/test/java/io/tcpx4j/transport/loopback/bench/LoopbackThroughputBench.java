package io.tcpx4j.transport.loopback.bench;

import io.tcpx4j.domain.memory.CpuScatterGather;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Transport-level throughput: LoopbackTransport (isend/irecv of 64 MiB in 512 KiB chunks, window 12,
 * 2 sockets per comm, one I/O thread per endpoint, one caller thread driving both endpoints) against
 * a raw Java NIO copy over the same number of sockets (blocking, one writer and one reader thread per
 * socket, chunk k on socket k mod 2), in the same run. Reports the median of the measured rounds.
 *
 * <p>Run: {@code java -cp <classes> io.tcpx4j.transport.loopback.bench.LoopbackThroughputBench [rounds]}
 */
public final class LoopbackThroughputBench {

    private static final int TOTAL = 64 << 20;
    private static final int CHUNK = 512 << 10;
    private static final int WINDOW = 12;
    private static final int SOCKETS = 2;
    private static final int CHUNKS = TOTAL / CHUNK;

    private LoopbackThroughputBench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        long src = NativeMemory.allocate(TOTAL, 4096);
        long dst = NativeMemory.allocate(TOTAL, 4096);
        for (long i = 0; i < TOTAL; i += 8) {
            NativeMemory.putLong(src + i, i * 0x9E3779B97F4A7C15L);
        }
        double raw = median(rounds, () -> rawNio(src, dst));
        double inPlace = median(rounds, () -> loopback(src, dst, false));
        double devmem = median(rounds, () -> loopback(src, dst, true));
        System.out.printf("raw NIO, %d sockets:                     %.2f GB/s%n", SOCKETS, raw);
        System.out.printf("LoopbackTransport, devmem off:           %.2f GB/s  (%.2f of raw)%n", inPlace, inPlace / raw);
        System.out.printf("LoopbackTransport, devmem on + unpack:   %.2f GB/s  (%.2f of raw)%n", devmem, devmem / raw);
        NativeMemory.free(src);
        NativeMemory.free(dst);
    }

    interface Round {
        double gbps() throws Exception;
    }

    private static double median(int rounds, Round r) throws Exception {
        r.gbps(); // warm-up: JIT, socket buffers
        double[] v = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            v[i] = r.gbps();
        }
        Arrays.sort(v);
        return v[rounds / 2];
    }

    private static double loopback(long src, long dst, boolean devmem) {
        LoopbackConfig cfg = LoopbackConfig.defaults().withSocketsPerComm(SOCKETS).withDevmem(devmem).withIoThreads(1);
        try (LoopbackTransport a = new LoopbackTransport(cfg); LoopbackTransport b = new LoopbackTransport(cfg)) {
            Listener l = b.listen(0);
            SendComm s = null;
            RecvComm r = null;
            while (s == null || r == null) {
                s = s != null ? s : a.connect(0, l.handle());
                r = r != null ? r : b.accept(l);
                LockSupport.parkNanos(100_000);
            }
            MemoryRegistration sr = a.register(s, src, TOTAL, PtrType.HOST);
            MemoryRegistration rr = b.register(r, dst, TOTAL, PtrType.HOST);
            NativeMemory.fill(dst, TOTAL, (byte) 0);
            ArrayDeque<NetRequest> sends = new ArrayDeque<>();
            ArrayDeque<NetRequest> recvs = new ArrayDeque<>();
            int posted = 0;
            int received = 0;
            long t0 = System.nanoTime();
            while (received < CHUNKS) {
                while (posted < CHUNKS && sends.size() < WINDOW && recvs.size() < WINDOW) {
                    NetRequest rq = b.irecv(r, dst + (long) posted * CHUNK, CHUNK, 0, rr);
                    if (rq == null) {
                        break;
                    }
                    recvs.add(rq);
                    NetRequest sq;
                    while ((sq = a.isend(s, src + (long) posted * CHUNK, CHUNK, 0, sr)) == null) {
                        Thread.onSpinWait();
                    }
                    sends.add(sq);
                    posted++;
                }
                boolean progress = false;
                while (!sends.isEmpty() && a.test(sends.peek())) {
                    sends.poll();
                    progress = true;
                }
                while (!recvs.isEmpty() && b.test(recvs.peek())) {
                    NetRequest rq = recvs.poll();
                    CpuScatterGather.unpack(rq, dst + (long) received * CHUNK);
                    b.consumed(r, rq);
                    received++;
                    progress = true;
                }
                if (!progress) {
                    // park like an engine's idle strategy: spinning here would starve the I/O threads on 2 cores
                    LockSupport.parkNanos(20_000);
                }
            }
            long ns = System.nanoTime() - t0;
            check(src, dst);
            return TOTAL / (double) ns;
        }
    }

    private static double rawNio(long src, long dst) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel[] out = new SocketChannel[SOCKETS];
            SocketChannel[] in = new SocketChannel[SOCKETS];
            for (int i = 0; i < SOCKETS; i++) {
                out[i] = SocketChannel.open(server.getLocalAddress());
                out[i].setOption(StandardSocketOptions.TCP_NODELAY, true);
                in[i] = server.accept();
            }
            NativeMemory.fill(dst, TOTAL, (byte) 0);
            Thread[] threads = new Thread[2 * SOCKETS];
            long t0 = System.nanoTime();
            for (int i = 0; i < SOCKETS; i++) {
                int sock = i;
                threads[2 * i] = new Thread(() -> pipe(out[sock], src, sock, true));
                threads[2 * i + 1] = new Thread(() -> pipe(in[sock], dst, sock, false));
            }
            for (Thread t : threads) {
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            long ns = System.nanoTime() - t0;
            for (int i = 0; i < SOCKETS; i++) {
                out[i].close();
                in[i].close();
            }
            check(src, dst);
            return TOTAL / (double) ns;
        }
    }

    private static void pipe(SocketChannel ch, long base, int sock, boolean write) {
        ByteBuffer view = NativeMemory.newView();
        try {
            for (int k = sock; k < CHUNKS; k += SOCKETS) {
                NativeMemory.retarget(view, base + (long) k * CHUNK, CHUNK);
                while (view.hasRemaining()) {
                    if ((write ? ch.write(view) : ch.read(view)) < 0) {
                        throw new IOException("EOF");
                    }
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void check(long src, long dst) {
        for (long i = 0; i < TOTAL; i += 8) {
            if (NativeMemory.getLong(src + i) != NativeMemory.getLong(dst + i)) {
                throw new IllegalStateException("corrupt at byte " + i);
            }
        }
    }
}
