package io.tcpx4j.cli.fleet;

import io.tcpx4j.cli.layout.Stripes;

import java.util.List;

/**
 * The rows every worker of a fleet run measures, in order, and how. Every member must run the same
 * plan (with the same scheme and worker count): {@link #fingerprint} is compared when they join.
 *
 * @param write            WRITE (initiators push into targets) or READ (they pull)
 * @param transport        transport label, for the fingerprint
 * @param memory           memory kind label, for the fingerprint
 * @param rows             the rows, in run order
 * @param checkConsistency fill sources with pattern data and check every destination byte of each row
 * @param reversed         descriptor i of a batch covers block {@code batch-1-i} on both sides, else block i
 * @param initiatorGpus    GPUs an initiator's buffers spread over (1 for host memory), for the fingerprint
 * @param targetGpus       the same on a target
 */
public record FleetPlan(boolean write, String transport, String memory, List<Row> rows, boolean checkConsistency,
                        boolean reversed, int initiatorGpus, int targetGpus) {

    /**
     * One row.
     *
     * @param blockSize  bytes per descriptor
     * @param batchSize  descriptors per transfer
     * @param iterations measured transfers of each initiator to each of its targets
     * @param warmup     unmeasured transfers before them
     */
    public record Row(long blockSize, int batchSize, int iterations, int warmup) {
    }

    public FleetPlan {
        rows = List.copyOf(rows);
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no rows");
        }
    }

    /** A plan of one buffer per worker (host memory, or one GPU). */
    public FleetPlan(boolean write, String transport, String memory, List<Row> rows, boolean checkConsistency,
                     boolean reversed) {
        this(write, transport, memory, rows, checkConsistency, reversed, 1, 1);
    }

    /**
     * Bytes of each of a worker's {@code buffers} buffers: room for {@code slots} transfers of the largest
     * row, its blocks spread over them.
     */
    public long bytesPerBuffer(int slots, int buffers) {
        return rows.stream().mapToLong(r -> Stripes.bytesPerBuffer((long) slots * r.batchSize(), r.blockSize(),
                buffers)).max().orElse(0);
    }

    /** What must be equal on every member of a run. */
    String fingerprint(Scheme scheme, int workers) {
        return scheme.label() + " x" + workers + ", " + (write ? "write" : "read") + " " + memory + " over " + transport
                + (initiatorGpus > 1 || targetGpus > 1 ? " (GPUs per initiator " + initiatorGpus + ", per target "
                + targetGpus + ")" : "") + (checkConsistency ? ", checked" : "") + (reversed ? ", reversed" : "")
                + ", rows " + rows;
    }
}
