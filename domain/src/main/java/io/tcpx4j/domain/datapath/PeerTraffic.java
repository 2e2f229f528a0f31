package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.PeerStats;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.protocol.RefusalCode;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The counts of what one peer did in this engine's memory ({@link PeerStats}), kept by the
 * {@link TransferProtocol}s of the peer's connections where they serve it: WRITEs landed, READs served, and
 * refusals by code, per operation.
 *
 * <p>Only the agent that serves the peer writes them, one driver at a time; anything may read them. A count
 * is therefore advanced by a plain read and an ordered write (no lock, no compare-and-set, nothing allocated),
 * and read whole from any thread.
 */
public final class PeerTraffic implements PeerStats {

    private static final int WRITES = 0;
    private static final int BYTES_WRITTEN = 1;
    private static final int READS = 2;
    private static final int BYTES_READ = 3;
    private static final int CODES = Code.values().length;
    /** Refusals of WRITEs from here, one slot per code, then those of READs. */
    private static final int REFUSED = 4;

    private final String peer;
    private final AtomicLongArray counts = new AtomicLongArray(REFUSED + 2 * CODES);

    public PeerTraffic(String peer) {
        this.peer = Objects.requireNonNull(peer, "peer");
    }

    private void add(int slot, long n) {
        counts.lazySet(slot, counts.get(slot) + n);
    }

    /** A WRITE of {@code bytes} from the peer landed. Agent only. */
    void wrote(long bytes) {
        add(BYTES_WRITTEN, bytes);
        add(WRITES, 1);
    }

    /** A READ of {@code bytes} by the peer left in full. Agent only. */
    void served(long bytes) {
        add(BYTES_READ, bytes);
        add(READS, 1);
    }

    /** A WRITE ({@code write}) or READ of the peer was refused with {@code refusal}. Agent only. */
    void refused(boolean write, RefusalCode refusal) {
        add(REFUSED + (write ? 0 : CODES) + refusal.code().ordinal(), 1);
    }

    @Override
    public String peer() {
        return peer;
    }

    @Override
    public long writes() {
        return counts.get(WRITES);
    }

    @Override
    public long bytesWritten() {
        return counts.get(BYTES_WRITTEN);
    }

    @Override
    public long reads() {
        return counts.get(READS);
    }

    @Override
    public long bytesRead() {
        return counts.get(BYTES_READ);
    }

    @Override
    public long refusedWrites(Code code) {
        return counts.get(REFUSED + code.ordinal());
    }

    @Override
    public long refusedReads(Code code) {
        return counts.get(REFUSED + CODES + code.ordinal());
    }

    @Override
    public String toString() {
        return "PeerTraffic[" + peer + ": " + writes() + " writes, " + bytesWritten() + " bytes; " + reads() + " reads, "
                + bytesRead() + " bytes]";
    }
}
