package io.tcpx4j.cli;

import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.cli.layout.Stripes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The target's part of one bench run: registered buffers on the target engine that the initiator
 * writes into or reads from (one of host memory, or one per GPU the run spreads over, laid out as
 * {@link Stripes}), plus the checks the initiator asks for. Used in-process by embedded runs and behind
 * the out-of-band server by two-host runs.
 *
 * <p><b>Not thread-safe</b>: one run drives it from one thread.
 */
final class TargetSide implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(TargetSide.class.getName());
    /** How long the target waits for the notification that says a row's data has landed. */
    static final Duration LANDING_TIMEOUT = Duration.ofSeconds(30);

    private final Node node;
    private final Stripes buffers;
    private final List<RegisteredMemory> registrations = new ArrayList<>();
    private java.util.List<byte[]> lastLanded = java.util.List.of();
    private boolean closed;

    /**
     * Allocates and registers {@code bytes} on {@code node}: one buffer of that size on each GPU of
     * {@code devices}, or one of host memory where the node's memory is host memory.
     */
    TargetSide(Node node, List<Integer> devices, long bytes) {
        this.node = node;
        this.buffers = node.memory().allocate(devices, bytes);
        try {
            for (var b : buffers.buffers()) {
                registrations.add(node.engine().register(b));
            }
        } catch (RuntimeException e) {
            registrations.forEach(RegisteredMemory::close);
            node.memory().free(buffers);
            throw e;
        }
    }

    Stripes buffers() {
        return buffers;
    }

    /** The buffers' public metadata, in block order, for the initiator's {@code loadRemoteMetadata}. */
    List<byte[]> metadata() {
        return registrations.stream().map(RegisteredMemory::publicMetadata).toList();
    }

    /**
     * Whether {@code count} blocks of {@code block} bytes fit the buffers: what an initiator may ask to fill
     * or check.
     */
    boolean holds(long block, long count) {
        return block > 0 && count >= 0 && buffers.holds(count, block);
    }

    /** Fills blocks {@code [0, count)} of {@code block} bytes with pattern {@code seed} (source of a READ row). */
    void fill(long seed, long block, long count) {
        node.memory().fill(buffers, 0, count, block, seed);
    }

    /**
     * Waits for every notification of {@code landed} (the initiator attaches one to the last transfer
     * of each slot of a WRITE row, so together they mean every byte of the row is in place), then
     * checks blocks {@code [0, count)} of {@code block} bytes against pattern {@code seed}.
     *
     * @throws IllegalStateException if a notification does not come within {@link #LANDING_TIMEOUT}
     */
    Verified verify(long seed, long block, long count, java.util.List<byte[]> landed) {
        for (byte[] note : landed) {
            if (!node.awaitNotification(note, LANDING_TIMEOUT)) {
                throw new IllegalStateException("the last WRITE of the row did not land within "
                        + LANDING_TIMEOUT.toSeconds() + " s");
            }
        }
        lastLanded = java.util.List.copyOf(landed);
        return node.memory().verify(buffers, 0, count, block, seed);
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
     * Deregisters and frees the buffers once no transfer is live. If the engine does not drain in
     * time the buffers are leaked rather than freed under a transfer.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        registrations.forEach(RegisteredMemory::close);
        if (node.awaitQuiet(Duration.ofSeconds(10))) {
            node.memory().free(buffers);
        } else {
            LOG.log(System.Logger.Level.WARNING, "transfers still live after a run: leaking {0} bytes rather than"
                    + " freeing them under a transfer", buffers.buffers().stream().mapToLong(b -> b.length()).sum());
        }
    }
}
