package io.tcpx4j.domain;

/**
 * A validated READ or WRITE on its way to the agent. Local regions are already pinned.
 */
record Post(boolean write, Xfer xfer, long[] localAddresses, long[] remoteAddresses, long[] lengths,
            LocalRegion[] regions, byte[] notification) implements PendingWork {

    void releaseRegions() {
        LocalRegion.releaseAll(regions);
    }
}
