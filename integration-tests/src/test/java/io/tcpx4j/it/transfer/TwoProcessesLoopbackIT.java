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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The same 256 MiB WRITE and READ in both directions as {@link TwoEnginesLoopbackIT}, but between two
 * JVMs: this one ("parent") and a {@link PeerProcess} ("child") started with the test's class path.
 * Conn-info and metadata travel over the child's stdin and stdout; the child checks what it received
 * against the seed every byte and reports SHA-256 digests of its buffer, which must match ours.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class TwoProcessesLoopbackIT {

    private static final long SIZE = PeerProcess.SIZE;
    private static final long GUARD = PeerProcess.GUARD;
    /** Longest wait for one reply of the child; a transfer plus a digest fits easily. */
    private static final Duration REPLY = Duration.ofSeconds(100);
    private static final String EOF = "\u0000eof";

    private Process child;
    private Path childLog;
    private PrintWriter toChild;
    private final BlockingQueue<String> fromChild = new LinkedBlockingQueue<>();
    private LoopbackNode parent;
    private long base;
    private long data;
    private long childData;

    @BeforeAll
    void startBothSides() throws Exception {
        parent = LoopbackNode.start(LoopbackNode.config("parent"), LoopbackConfig.defaults());
        base = parent.allocate(SIZE + 2 * GUARD);
        data = base + GUARD;
        RegisteredMemory region = parent.register(base, SIZE + 2 * GUARD);

        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        childLog = Files.createTempFile(Path.of(System.getProperty("java.io.tmpdir")), "tcpx4j-peer-", ".log");
        // native buffers live outside the heap: a small heap keeps the child's footprint honest
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "-Xmx64m", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), PeerProcess.class.getName())
                .redirectError(childLog.toFile());
        child = pb.start();
        toChild = new PrintWriter(new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8), true);
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    fromChild.add(line);
                }
            } catch (IOException ignored) {
                // the child went away; EOF below says so
            } finally {
                fromChild.add(EOF);
            }
        }, "peer-stdout");
        pump.setDaemon(true);
        pump.start();

        String[] hello = await("@hello");
        Base64.Decoder b64 = Base64.getDecoder();
        parent.engine.loadPeer("child", b64.decode(hello[1]));
        parent.engine.loadRemoteMetadata("child", b64.decode(hello[2]));
        childData = Long.parseLong(hello[3]);
        assertThat(Long.parseLong(hello[4])).isEqualTo(SIZE);
        Base64.Encoder enc = Base64.getEncoder();
        send("peer " + enc.encodeToString(parent.engine.connInfo()) + " "
                + enc.encodeToString(region.publicMetadata()) + " " + data);
        await("@ok");
    }

    @AfterAll
    void stopBothSides() throws Exception {
        String exit = "not started";
        try {
            if (child != null && child.isAlive()) {
                send("quit");
                child.waitFor(20, TimeUnit.SECONDS);
            }
        } finally {
            try {
                if (child != null) {
                    exit = child.isAlive() ? "still running after quit" : "status " + child.exitValue();
                    child.destroy();
                    if (!child.waitFor(5, TimeUnit.SECONDS)) {
                        child.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                    }
                }
            } finally {
                if (parent != null) {
                    parent.close();
                }
            }
        }
        if (child == null) {
            return; // start-up failed and said why
        }
        String log = childLogTail();
        Files.deleteIfExists(childLog);
        assertThat(exit).as("the child's exit after quit%s", log).isEqualTo("status 0");
    }

    @Test
    void parentWritesIntoTheChild() throws Exception {
        long seed = 0xC0FFEE01L;
        Bytes.fill(data, SIZE, seed);
        send("poison");
        await("@ok");
        byte[] note = note("write", seed);
        // the child starts watching before the data moves, so it sees the notification the moment it lands
        send("expect " + seed + " " + b64(note));
        Transfer t = parent.engine.session("child").write(List.of(mine()), List.of(theirs()), note);
        assertThat(t.await(REPLY)).as("WRITE into the child: %s", t.error()).isEqualTo(TransferStatus.DONE);
        String[] r = await("@expect");
        assertThat(Integer.parseInt(r[1])).as("notifications the child received").isEqualTo(1);
        assertThat(Boolean.parseBoolean(r[2])).as("the notification is ours, byte for byte").isTrue();
        assertThat(Long.parseLong(r[3])).as("child: first byte missing when notified (-1: none)").isEqualTo(-1L);
        assertThat(Long.parseLong(r[4])).as("child: first wrong byte (-1: none)").isEqualTo(-1L);
        assertThat(Boolean.parseBoolean(r[5])).as("child: guard bands intact").isTrue();
        assertThat(r[6]).as("SHA-256 of the child's buffer against ours").isEqualTo(Bytes.sha256(data, SIZE));
        assertThat(parent.engine.drainNotifications()).isEmpty();
        assertQuiet();
    }

    @Test
    void childWritesIntoTheParent() throws Exception {
        long seed = 0xC0FFEE02L;
        send("fill " + seed);
        await("@ok");
        NativeMemory.fill(base, SIZE + 2 * GUARD, Bytes.POISON);
        byte[] note = note("write", seed);
        send("write " + b64(note));
        long mismatchWhenNotified = awaitNotification(note, seed);
        String[] r = await("@done");
        assertThat(r[1]).as("the child's WRITE").isEqualTo("DONE");
        assertThat(mismatchWhenNotified).as("first byte missing when notified (-1: none)").isEqualTo(-1L);
        assertOwnData(seed);
        assertThat(r[2]).as("SHA-256 of the child's source against our buffer").isEqualTo(Bytes.sha256(data, SIZE));
        assertQuiet();
    }

    @Test
    void parentReadsFromTheChild() throws Exception {
        long seed = 0xC0FFEE03L;
        send("fill " + seed);
        await("@ok");
        NativeMemory.fill(base, SIZE + 2 * GUARD, Bytes.POISON);
        byte[] note = note("read", seed);
        send("expect " + seed + " " + b64(note));
        Transfer t = parent.engine.session("child").read(List.of(mine()), List.of(theirs()), note);
        assertThat(t.await(REPLY)).as("READ from the child: %s", t.error()).isEqualTo(TransferStatus.DONE);
        assertOwnData(seed);
        String[] r = await("@expect");
        assertThat(Integer.parseInt(r[1])).as("notifications the child received").isEqualTo(1);
        assertThat(Boolean.parseBoolean(r[2])).as("the notification is ours, byte for byte").isTrue();
        assertThat(Long.parseLong(r[4])).as("child: its source changed at (-1: nowhere)").isEqualTo(-1L);
        assertThat(r[6]).as("SHA-256 of the child's source against our buffer").isEqualTo(Bytes.sha256(data, SIZE));
        assertThat(parent.engine.drainNotifications()).isEmpty();
        assertQuiet();
    }

    @Test
    void childReadsFromTheParent() throws Exception {
        long seed = 0xC0FFEE04L;
        Bytes.fill(data, SIZE, seed);
        send("poison");
        await("@ok");
        byte[] note = note("read", seed);
        send("read " + seed + " " + b64(note));
        awaitNotification(note, seed);
        String[] r = await("@done");
        assertThat(r[1]).as("the child's READ").isEqualTo("DONE");
        assertThat(Long.parseLong(r[2])).as("child: first wrong byte (-1: none)").isEqualTo(-1L);
        assertThat(Boolean.parseBoolean(r[3])).as("child: guard bands intact").isTrue();
        assertThat(r[4]).as("SHA-256 of the child's buffer against our source").isEqualTo(Bytes.sha256(data, SIZE));
        assertThat(Bytes.firstMismatchWithPattern(data, SIZE, seed)).as("our source changed at (-1: nowhere)")
                .isEqualTo(-1L);
        assertQuiet();
    }

    // ------------------------------------------------------------------ helpers

    private MemoryDescriptor mine() {
        return MemoryDescriptor.dram(data, SIZE);
    }

    private MemoryDescriptor theirs() {
        return MemoryDescriptor.dram(childData, SIZE);
    }

    private static byte[] note(String op, long seed) {
        return (op + "-" + Long.toHexString(seed)).getBytes(StandardCharsets.UTF_8);
    }

    private static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    /**
     * Waits for exactly one notification from the child; returns the first byte of our buffer that did
     * not match the pattern at the moment it arrived (-1: none), which only means something when we
     * are the destination.
     */
    private long awaitNotification(byte[] note, long seed) throws InterruptedException {
        List<Notification> got = new ArrayList<>();
        long mismatch = Long.MIN_VALUE;
        long deadline = System.nanoTime() + REPLY.toNanos();
        while (got.isEmpty() && System.nanoTime() < deadline) {
            got.addAll(parent.engine.drainNotifications());
            if (got.isEmpty()) {
                Thread.sleep(1);
            } else {
                mismatch = Bytes.firstMismatchWithPattern(data, SIZE, seed);
            }
        }
        Thread.sleep(200);
        got.addAll(parent.engine.drainNotifications());
        assertThat(got).as("notifications from the child").containsExactly(new Notification("child", note));
        return mismatch;
    }

    private void assertOwnData(long seed) {
        assertThat(Bytes.firstMismatchWithPattern(data, SIZE, seed)).as("first wrong byte here (-1: none)")
                .isEqualTo(-1L);
        assertThat(Bytes.all(base, GUARD, Bytes.POISON)).as("guard band before our buffer").isTrue();
        assertThat(Bytes.all(data + SIZE, GUARD, Bytes.POISON)).as("guard band after our buffer").isTrue();
    }

    /** Neither side holds requests or operations once a transfer and its notification are through. */
    private void assertQuiet() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            EngineStats s = parent.engine.stats();
            send("stats");
            String[] r = await("@stats");
            boolean quiet = s.outstandingRequests() == 0 && s.liveOperations() == 0
                    && r[1].equals("0") && r[2].equals("0");
            if (quiet || System.nanoTime() > deadline) {
                assertThat(s.outstandingRequests()).as("parent: requests held on the transport").isZero();
                assertThat(s.liveOperations()).as("parent: live operations").isZero();
                assertThat(s.connections()).as("parent: connections").isEqualTo(1);
                assertThat(r[1]).as("child: requests held on the transport").isEqualTo("0");
                assertThat(r[2]).as("child: live operations").isEqualTo("0");
                assertThat(r[3]).as("child: connections").isEqualTo("1");
                return;
            }
            Thread.sleep(10);
        }
    }

    private void send(String line) {
        toChild.println(line);
        if (toChild.checkError()) {
            fail("cannot write to the child (exited? " + exitStatus() + ")" + childLogTail());
        }
    }

    /** The next reply line that starts with {@code prefix}, split on spaces; fails after {@link #REPLY}. */
    private String[] await(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + REPLY.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? fromChild.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                fail("no " + prefix + " from the child within " + REPLY + childLogTail());
            }
            if (line.equals(EOF)) {
                fail("the child exited (" + exitStatus() + ") while we waited for " + prefix + childLogTail());
            }
            if (line.startsWith(prefix + " ") || line.equals(prefix)) {
                return line.split(" ");
            }
            if (line.startsWith("@")) {
                fail("expected " + prefix + " from the child, got: " + line + childLogTail());
            }
        }
    }

    private String exitStatus() {
        try {
            return child.waitFor(1, TimeUnit.SECONDS) ? "status " + child.exitValue() : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private String childLogTail() {
        try {
            List<String> lines = Files.readAllLines(childLog, StandardCharsets.UTF_8);
            return "\n--- child stderr (last 40 lines) ---\n"
                    + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "\n(child stderr unreadable: " + e + ")";
        }
    }
}
