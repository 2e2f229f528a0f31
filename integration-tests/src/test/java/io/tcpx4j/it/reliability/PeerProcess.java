package io.tcpx4j.it.reliability;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link PeerMain} child JVM seen from the test: start, ask, freeze ({@code kill -STOP}), thaw, kill -9.
 * {@link #close()} always leaves no process behind (thaw, QUIT, then destroyForcibly).
 *
 * <p>Not thread-safe: one test thread talks to it.
 */
final class PeerProcess implements AutoCloseable {

    final String name;
    final Process process;
    final long pid;
    final byte[] connInfo;
    final byte[] metadata;
    final long regionAddress;
    final long regionSize;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private PeerProcess(String name, long regionSize, long seed) throws IOException {
        this.name = name;
        this.regionSize = regionSize;
        String java = ProcessHandle.current().info().command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        File logDir = new File("target/reliability-peers");
        logDir.mkdirs();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx96m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), PeerMain.class.getName(),
                name, Long.toString(regionSize), Long.toString(seed));
        pb.redirectError(ProcessBuilder.Redirect.appendTo(new File(logDir, name + ".log")));
        process = pb.start();
        pid = process.pid();
        stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the process died; callers time out on their next line
            }
        }, "peer-stdout-" + name);
        reader.setDaemon(true);
        reader.start();
        String ready;
        try {
            ready = next(Duration.ofSeconds(60));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        if (!ready.startsWith("READY ")) {
            close();
            throw new IllegalStateException(name + " did not start: " + ready);
        }
        String[] a = ready.split(" ");
        connInfo = Base64.getDecoder().decode(a[1]);
        metadata = Base64.getDecoder().decode(a[2]);
        regionAddress = Long.parseLong(a[3]);
    }

    static PeerProcess start(String name, long regionSize, long seed) throws IOException {
        return new PeerProcess(name, regionSize, seed);
    }

    private String next(Duration timeout) {
        try {
            String l = lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (l == null) {
                throw new IllegalStateException(name + " (pid " + pid + ") said nothing for " + timeout
                        + "; alive " + process.isAlive());
            }
            return l;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Sends one command and returns its one-line answer. */
    String ask(String command) {
        send(command);
        return next(Duration.ofSeconds(60));
    }

    /** Sends one command without waiting for its answer. */
    void send(String command) {
        try {
            stdin.write(command + "\n");
            stdin.flush();
        } catch (IOException e) {
            throw new IllegalStateException(name + " is gone: " + e, e);
        }
    }

    long crc(long address, long length) {
        String a = ask("CRC " + address + " " + length);
        return Long.parseLong(a.substring(4));
    }

    /** [connections, requests, live ops, regions, comms, registrations] of the child's engine. */
    long[] stats() {
        String[] a = ask("STATS").split(" ");
        long[] s = new long[a.length - 1];
        for (int i = 1; i < a.length; i++) {
            s[i - 1] = Long.parseLong(a[i]);
        }
        return s;
    }

    /** SIGSTOP: the process stays, its sockets stay open, nothing reads or answers. */
    void freeze() {
        signal("-STOP");
    }

    /** SIGCONT. */
    void thaw() {
        signal("-CONT");
    }

    private void signal(String sig) {
        try {
            Process k = new ProcessBuilder("kill", sig, Long.toString(pid)).redirectErrorStream(true).start();
            if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
                k.destroyForcibly();
                throw new IllegalStateException("kill " + sig + " " + pid + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** kill -9 and wait until the kernel has reaped it (its sockets are gone then). */
    void kill9() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                signal("-CONT");
                stdin.write("QUIT\n");
                stdin.flush();
                stdin.close();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (IOException | RuntimeException e) {
                process.destroyForcibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
