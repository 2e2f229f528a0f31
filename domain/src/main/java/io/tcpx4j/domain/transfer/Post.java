package io.tcpx4j.domain.transfer;

import io.tcpx4j.domain.registration.LocalRegion;

/**
 * A validated READ or WRITE on its way to the agent. Local regions are already pinned. {@code inline}:
 * its bytes travel in the control frames (host memory on both sides, small enough). {@code packing}:
 * what a WRITE announces, or the most a READ takes.
 */
public record Post(boolean write, PostedTransfer xfer, long[] localAddresses, long[] remoteAddresses, long[] lengths,
            LocalRegion[] regions, byte[] notification, boolean inline, Packing packing) {

    public void releaseRegions() {
        LocalRegion.releaseAll(regions);
    }
}
