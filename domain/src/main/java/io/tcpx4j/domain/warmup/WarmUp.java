package io.tcpx4j.domain.warmup;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.port.out.DeviceMemory;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Compiles the engine's transfer paths before the application's first transfer needs them. A freshly
 * started JVM runs the protocol, framing and data-path code in the interpreter until the JIT has seen
 * it thousands of times; a host whose first requests arrive right after start-up would pay for that.
 * WarmUp drives two private engines of the same configuration, transport and memory (an initiator and
 * a target, so both sides' code runs) through a mix of WRITEs and READs, single and batched, small,
 * medium and chunked, with notifications, on a daemon thread of its own, then closes them.
 *
 * <p>The private engines are separate agents with their own names, control listeners and registered
 * buffers: the application's engine, peers and memory are never touched. The run ends after the
 * planned number of transfers, after {@link #MAX_TIME}, at the first transfer that does not end DONE
 * (logged, never thrown), or when {@link #close()} is called; in every case both engines and the
 * buffers are released.
 *
 * <p>Thread-safe.
 */
public final class WarmUp implements AutoCloseable {

    /** Longest a warm-up runs: on a host too busy to finish it quickly it yields the CPU to the application. */
    public static final Duration MAX_TIME = Duration.ofSeconds(10);

    private static final System.Logger LOG = System.getLogger(WarmUp.class.getName());
    private static final int SMALL = 4096;
    private static final int MEDIUM = 64 * 1024;
    private static final int BATCH = 16;
    /** A region this size holds every shape of the mix and spans more than one chunk at the default chunk size. */
    private static final long REGION = 2L * 1024 * 1024;
    private static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(5);
    private static final byte[] NOTE = {'w'};

    /** What a warm-up did: transfers that ended DONE, how long it ran, and why it stopped early (or null). */
    public record Result(int transfers, Duration elapsed, String stoppedBecause) {
    }

    private final TransferEngine initiator;
    private final TransferEngine target;
    private final DeviceMemory memory;
    private final MemoryKind kind;
    private final int device;
    private final int planned;
    private final List<AutoCloseable> owned;
    private final Thread thread;
    private volatile boolean closing;
    private volatile Result result;

    private WarmUp(TransferEngine initiator, TransferEngine target, DeviceMemory memory, MemoryKind kind, int device,
                   int transfers, List<AutoCloseable> owned) {
        this.initiator = Objects.requireNonNull(initiator, "initiator");
        this.target = Objects.requireNonNull(target, "target");
        this.memory = Objects.requireNonNull(memory, "memory");
        this.kind = Objects.requireNonNull(kind, "kind");
        this.device = device;
        this.planned = transfers;
        this.owned = owned;
        this.thread = new Thread(this::run, "tcpx4j-warmup");
        thread.setDaemon(true);
    }

    /**
     * Starts warming up in the background with two started engines that nothing else uses; WarmUp owns
     * and closes them, then {@code alsoOwned} (what only those engines used). Buffers of {@code kind} come
     * from {@code memory}.
     *
     * @param transfers how many transfers to run (at least 1)
     */
    public static WarmUp start(TransferEngine initiator, TransferEngine target, DeviceMemory memory, MemoryKind kind,
                               int device, int transfers, AutoCloseable... alsoOwned) {
        if (transfers < 1) {
            throw new IllegalArgumentException("transfers must be at least 1: " + transfers);
        }
        WarmUp w = new WarmUp(initiator, target, memory, kind, device, transfers, List.of(alsoOwned));
        w.thread.start();
        return w;
    }

    /**
     * Waits up to {@code timeout} for the run to end (its thread included); its result, or null if it has
     * not ended yet.
     */
    public Result await(Duration timeout) throws InterruptedException {
        if (timeout.isZero()) {
            return thread.isAlive() ? null : result;
        }
        thread.join(Math.max(1, timeout.toMillis()));
        return thread.isAlive() ? null : result;
    }

    /** Stops the run if it is still going and waits until its engines and buffers are released. */
    @Override
    public void close() {
        closing = true;
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        long start = System.nanoTime();
        int done = 0;
        String stopped = null;
        List<MemoryDescriptor> buffers = new ArrayList<>(2);
        List<RegisteredMemory> regions = new ArrayList<>(2);
        try {
            MemoryDescriptor src = memory.allocate(kind, REGION, device);
            buffers.add(src);
            MemoryDescriptor dst = memory.allocate(kind, REGION, device);
            buffers.add(dst);
            RegisteredMemory local = initiator.register(src);
            regions.add(local);
            RegisteredMemory remote = target.register(dst);
            regions.add(remote);
            initiator.loadPeer(target.name(), target.connInfo());
            target.loadPeer(initiator.name(), initiator.connInfo());
            initiator.loadRemoteMetadata(target.name(), remote.publicMetadata());
            Session session = initiator.session(target.name());
            long deadline = start + MAX_TIME.toNanos();
            while (done < planned) {
                if (closing) {
                    stopped = "closed";
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    stopped = "time limit " + MAX_TIME.toSeconds() + " s";
                    break;
                }
                Transfer t = next(session, src, dst, done);
                TransferStatus s = initiator.driveUntilEnded(t, TRANSFER_TIMEOUT);
                if (s != TransferStatus.DONE) {
                    stopped = "a transfer ended " + s + t.error().map(e -> ": " + e.getMessage()).orElse("");
                    break;
                }
                done++;
                if ((done & 63) == 0) {
                    target.drainNotifications();
                }
            }
        } catch (RuntimeException e) {
            stopped = e.toString();
        } finally {
            release(regions, buffers);
            result = new Result(done, Duration.ofNanos(System.nanoTime() - start), stopped);
        }
        if (stopped == null || stopped.equals("closed")) {
            LOG.log(Level.DEBUG, () -> "warm-up: " + result);
        } else {
            LOG.log(Level.INFO, () -> "warm-up stopped early, the first transfers may be slower: " + result);
        }
    }

    /** The i-th transfer of the mix: single and batched, WRITE and READ, small, medium and chunked. */
    private static Transfer next(Session session, MemoryDescriptor src, MemoryDescriptor dst, int i) {
        switch (i % 8) {
            case 0, 2:
                return session.write(List.of(slice(src, 0, SMALL)), List.of(slice(dst, 0, SMALL)), null);
            case 1, 3:
                return session.read(List.of(slice(src, 0, SMALL)), List.of(slice(dst, 0, SMALL)), null);
            case 4:
                return session.write(List.of(slice(src, 0, MEDIUM)), List.of(slice(dst, 0, MEDIUM)), NOTE);
            case 5:
                return session.write(batch(src, false), batch(dst, true), null);
            case 6:
                return session.read(batch(src, false), batch(dst, true), null);
            default:
                return (i & 8) == 0
                        ? session.write(List.of(src), List.of(dst), NOTE)
                        : session.read(List.of(src), List.of(dst), null);
        }
    }

    /** Sixteen 4 KiB descriptors; on the remote side in reverse order, so no two neighbours merge. */
    private static List<MemoryDescriptor> batch(MemoryDescriptor region, boolean reversed) {
        List<MemoryDescriptor> out = new ArrayList<>(BATCH);
        for (int k = 0; k < BATCH; k++) {
            int slot = reversed ? BATCH - 1 - k : k;
            out.add(slice(region, (long) slot * SMALL, SMALL));
        }
        return out;
    }

    private static MemoryDescriptor slice(MemoryDescriptor region, long offset, long length) {
        return new MemoryDescriptor(region.address() + offset, length, region.kind(), region.device());
    }

    private void release(List<RegisteredMemory> regions, List<MemoryDescriptor> buffers) {
        for (RegisteredMemory r : regions) {
            try {
                r.close();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "warm-up region close failed", e);
            }
        }
        List<AutoCloseable> toClose = new ArrayList<>(List.of(initiator, target));
        toClose.addAll(owned);
        for (AutoCloseable c : toClose) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.log(Level.DEBUG, "warm-up close failed", e);
            }
        }
        for (MemoryDescriptor b : buffers) {
            memory.free(b);
        }
    }
}
