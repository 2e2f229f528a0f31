package io.tcpx4j.domain.datapath;

import io.tcpx4j.domain.protocol.RefusalCode;
import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.transfer.Packing;
import io.tcpx4j.domain.transfer.PostedTransfer;

/**
 * The chunk plan of data this engine sends: the initiator side of a WRITE, or the target side of a
 * READ; a WRITE's plan also waits for the target's WRITE_ACK.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class SendPlan extends ChunkPlan {

    /** The local transfer (WRITE initiator); null on the target side of a READ. */
    final PostedTransfer xfer;
    private boolean acked;
    private RefusalCode ackStatus;

    SendPlan(PostedTransfer xfer, long xferId, long[] addresses, long[] lengths, LocalRegion[] regions, int chunkSize,
          Packing packing) {
        super(xferId, addresses, lengths, regions, chunkSize, packing, false);
        this.xfer = xfer;
    }

    /** Takes the target's WRITE_ACK with its status; false if one came already. */
    boolean ack(RefusalCode status) {
        if (acked) {
            return false;
        }
        acked = true;
        ackStatus = status;
        return true;
    }

    /** Whether the target's WRITE_ACK came and every chunk was sent: the WRITE may end. */
    boolean finished() {
        return acked && allCompleted();
    }

    /** The status of the target's WRITE_ACK (NONE: accepted). */
    RefusalCode ackStatus() {
        return ackStatus;
    }
}
