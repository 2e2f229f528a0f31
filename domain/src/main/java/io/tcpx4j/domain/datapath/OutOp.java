package io.tcpx4j.domain.datapath;

import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.transfer.Packing;
import io.tcpx4j.domain.transfer.Xfer;

/**
 * Data this engine sends: the initiator side of a WRITE, or the target side of a READ.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class OutOp extends ChunkPlan {

    /** The local transfer (WRITE initiator); null on the target side of a READ. */
    final Xfer xfer;
    boolean acked;
    int ackStatus;

    OutOp(Xfer xfer, long xferId, long[] addresses, long[] lengths, LocalRegion[] regions, int chunkSize,
          Packing packing) {
        super(xferId, addresses, lengths, regions, chunkSize, packing, false);
        this.xfer = xfer;
    }
}
