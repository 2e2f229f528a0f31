package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;

import java.time.Duration;

/**
 * The target's part of one bench run: a registered buffer on the target engine that the initiator
 * writes into or reads from, plus the checks the initiator asks for. Used in-process by embedded
 * runs and behind the out-of-band server by two-host runs.
 *
 * <p><b>Not thread-safe</b>: one run drives it from one thread.
 */
final class TargetSide implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(TargetSide.class.getName());
    /** How long the target waits for the notification that says a row's data has landed. */
    static final Duration LANDING_TIMEOUT = Duration.ofSeconds(30);

    private final Node node;
    private final MemoryDescriptor buffer;
    private final RegisteredMemory registration;
    private java.util.List<byte[]> lastLanded = java.util.List.of();
    private boolean closed;

    /** Allocates and registers {@code bytes} on {@code node}. */
    TargetSide(Node node, long bytes) {
        this.node = node;
        this.buffer = node.allocate(bytes);
        RegisteredMemory r;
        try {
            r = node.engine().register(buffer);
        } catch (RuntimeException e) {
            node.free(buffer);
            throw e;
        }
        this.registration = r;
    }

    MemoryDescriptor buffer() {
        return buffer;
    }

    /** The buffer's public metadata, for the initiator's {@code loadRemoteMetadata}. */
    byte[] metadata() {
        return registration.publicMetadata();
    }

    /** Fills the first {@code bytes} with pattern {@code seed} (source of a READ row). */
    void fill(long seed, long bytes) {
        node.fill(buffer, bytes, seed);
    }

    /**
     * Waits for every notification of {@code landed} (the initiator attaches one to the last transfer
     * of each slot of a WRITE row, so together they mean every byte of the row is in place), then
     * counts the first {@code bytes} that differ from pattern {@code seed}.
     *
     * @throws IllegalStateException if a notification does not come within {@link #LANDING_TIMEOUT}
     */
    long verify(long seed, long bytes, java.util.List<byte[]> landed) {
        for (byte[] note : landed) {
            if (!node.awaitNotification(note, LANDING_TIMEOUT)) {
                throw new IllegalStateException("the last WRITE of the row did not land within "
                        + LANDING_TIMEOUT.toSeconds() + " s");
            }
        }
        lastLanded = java.util.List.copyOf(landed);
        return node.verify(buffer, bytes, seed);
    }

    /** Waits (bounded) for the run's last notifications, so that nothing is in flight when freeing. */
    void finish(java.util.List<byte[]> last) {
        if (sameNotes(last, lastLanded)) {
            return; // already taken by verify
        }
        for (byte[] note : last) {
            if (!node.awaitNotification(note, LANDING_TIMEOUT)) {
                LOG.log(System.Logger.Level.WARNING, "the run's last notification did not arrive");
                return;
            }
        }
    }

    private static boolean sameNotes(java.util.List<byte[]> a, java.util.List<byte[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!java.util.Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Deregisters and frees the buffer once no transfer is live. If the engine does not drain in
     * time the buffer is leaked rather than freed under a transfer.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        registration.close();
        if (node.awaitQuiet(Duration.ofSeconds(10))) {
            node.free(buffer);
        } else {
            LOG.log(System.Logger.Level.WARNING, "transfers still live after a run: leaking {0} bytes rather than"
                    + " freeing them under a transfer", buffer.length());
        }
    }
}
