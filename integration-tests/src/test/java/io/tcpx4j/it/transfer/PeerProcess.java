package io.tcpx4j.it.transfer;

import io.tcpx4j.api.EngineStats;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.transport.loopback.LoopbackConfig;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * The far side of {@link TwoProcessesLoopbackIT}: one engine ("child") over the loopback transport in
 * its own JVM, driven line by line over stdin. Replies are single stdout lines that start with
 * {@code @}; everything else (logging) goes to stderr. The process ends on {@code quit}, on end of
 * input (the test died) or after {@link #LIFETIME}, whichever comes first, so it never outlives a run.
 *
 * <p>Commands (numbers in decimal, blobs in base64):
 * <pre>
 *   (start)                                   -> @hello connInfo metadata dataAddress size
 *   peer connInfo metadata dataAddress        -> @ok
 *   fill seed          (pattern into data)    -> @ok
 *   poison             (data and guards)      -> @ok
 *   expect seed note   (wait for one note)    -> @expect count sameNote mismatchWhenNotified mismatch guardsOk sha256
 *   write note         (data -> parent)       -> @done status sha256
 *   read seed note     (parent -> data)       -> @done status mismatch guardsOk sha256
 *   stats                                     -> @stats outstandingRequests liveOperations connections
 *   quit                                      -> @bye
 * </pre>
 * {@code mismatch} values are the offset of the first byte that differs from the seed's pattern, -1
 * for none.
 */
public final class PeerProcess {

    static final long SIZE = TwoEnginesLoopbackIT.SIZE;
    static final long GUARD = TwoEnginesLoopbackIT.GUARD;
    private static final Duration LIFETIME = Duration.ofMinutes(4);
    private static final Duration WAIT = Duration.ofSeconds(90);

    private final PrintStream out;
    private final LoopbackNode node;
    private final long base;
    private final long data;
    private final RegisteredMemory region;
    private long parentData;

    private PeerProcess(PrintStream out) {
        this.out = out;
        node = LoopbackNode.start(LoopbackNode.config("child"), LoopbackConfig.defaults());
        base = node.allocate(SIZE + 2 * GUARD);
        data = base + GUARD;
        NativeMemory.fill(base, SIZE + 2 * GUARD, Bytes.POISON);
        region = node.register(base, SIZE + 2 * GUARD);
    }

    public static void main(String[] args) throws Exception {
        // stdout is the protocol: keep it for replies and send anything else that prints to stderr
        PrintStream protocol = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(LIFETIME.toMillis());
                System.err.println("PeerProcess: lifetime of " + LIFETIME + " exceeded, exiting");
                Runtime.getRuntime().halt(3);
            } catch (InterruptedException e) {
                // normal exit
            }
        }, "peer-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        PeerProcess p = new PeerProcess(protocol);
        try {
            p.serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
        } finally {
            p.node.close();
        }
        System.exit(0);
    }

    private void serve(BufferedReader in) throws Exception {
        Base64.Encoder b64 = Base64.getEncoder();
        reply("@hello " + b64.encodeToString(node.engine.connInfo()) + " "
                + b64.encodeToString(region.publicMetadata()) + " " + data + " " + SIZE);
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.trim().split(" ");
            switch (a[0]) {
                case "peer" -> {
                    node.engine.loadPeer("parent", decode(a[1]));
                    node.engine.loadRemoteMetadata("parent", decode(a[2]));
                    parentData = Long.parseLong(a[3]);
                    reply("@ok");
                }
                case "fill" -> {
                    Bytes.fill(data, SIZE, Long.parseLong(a[1]));
                    reply("@ok");
                }
                case "poison" -> {
                    NativeMemory.fill(base, SIZE + 2 * GUARD, Bytes.POISON);
                    reply("@ok");
                }
                case "expect" -> expect(Long.parseLong(a[1]), decode(a[2]));
                case "write" -> move(true, 0, decode(a[1]));
                case "read" -> move(false, Long.parseLong(a[1]), decode(a[2]));
                case "stats" -> {
                    EngineStats s = node.engine.stats();
                    reply("@stats " + s.outstandingRequests() + " " + s.liveOperations() + " " + s.connections());
                }
                case "quit" -> {
                    reply("@bye");
                    return;
                }
                default -> reply("@error unknown command " + a[0]);
            }
        }
    }

    /**
     * Waits for the parent's notification; checks the data against the seed the moment it arrives (as
     * a WRITE target the data must be complete by then), then waits a little for duplicates.
     */
    private void expect(long seed, byte[] note) throws InterruptedException {
        List<Notification> got = new ArrayList<>();
        long mismatchWhenNotified = Long.MIN_VALUE;
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (got.isEmpty() && System.nanoTime() < deadline) {
            got.addAll(node.engine.drainNotifications());
            if (got.isEmpty()) {
                Thread.sleep(1);
            } else {
                mismatchWhenNotified = Bytes.firstMismatchWithPattern(data, SIZE, seed);
            }
        }
        Thread.sleep(200);
        got.addAll(node.engine.drainNotifications());
        boolean same = !got.isEmpty() && got.get(0).agent().equals("parent")
                && Arrays.equals(got.get(0).message(), note);
        reply("@expect " + got.size() + " " + same + " " + mismatchWhenNotified + " "
                + Bytes.firstMismatchWithPattern(data, SIZE, seed) + " " + guardsOk() + " " + Bytes.sha256(data, SIZE));
    }

    private void move(boolean write, long seed, byte[] note) throws InterruptedException {
        List<MemoryDescriptor> local = List.of(MemoryDescriptor.dram(data, SIZE));
        List<MemoryDescriptor> remote = List.of(MemoryDescriptor.dram(parentData, SIZE));
        Transfer t = write
                ? node.engine.session("parent").write(local, remote, note)
                : node.engine.session("parent").read(local, remote, note);
        TransferStatus s = t.await(WAIT);
        if (s != TransferStatus.DONE) {
            System.err.println("PeerProcess: transfer ended " + s + " " + t.error());
        }
        if (write) {
            reply("@done " + s + " " + Bytes.sha256(data, SIZE));
        } else {
            reply("@done " + s + " " + Bytes.firstMismatchWithPattern(data, SIZE, seed) + " " + guardsOk() + " "
                    + Bytes.sha256(data, SIZE));
        }
    }

    private boolean guardsOk() {
        return Bytes.all(base, GUARD, Bytes.POISON) && Bytes.all(data + SIZE, GUARD, Bytes.POISON);
    }

    private void reply(String line) {
        out.println(line);
    }

    private static byte[] decode(String s) {
        return Base64.getDecoder().decode(s);
    }
}
