package io.tcpx4j.domain.datapath;

import io.tcpx4j.domain.protocol.RefusalCode;
import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.transfer.Packing;
import io.tcpx4j.domain.transfer.PostedTransfer;

/**
 * The chunk plan of data this engine receives: the target side of a WRITE, or the initiator side of
 * a READ.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class ReceivePlan extends ChunkPlan {

    /** The local transfer (READ initiator); null on the target side of a WRITE. */
    final PostedTransfer xfer;
    /** Notification to deliver here (WRITE target) or to send back (READ initiator) when done. */
    final byte[] notification;
    /** A refused WRITE: chunks are drained into a discard buffer to keep the stream in step. */
    final RefusalCode refusal;

    ReceivePlan(PostedTransfer xfer, long xferId, long[] addresses, long[] lengths, LocalRegion[] regions, int chunkSize,
         Packing packing, byte[] notification, RefusalCode refusal) {
        super(xferId, addresses, lengths, regions, chunkSize, packing, refusal != RefusalCode.NONE);
        this.xfer = xfer;
        this.notification = notification;
        this.refusal = refusal;
    }
}
