package io.tcpx4j.domain.session;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.registration.LocalRegion;

import java.util.List;
import java.util.Objects;

/** Validation of what an application posts, shared by local and remote sessions. */
final class Descriptors {

    private Descriptors() {
    }

    /** Local and remote lists pair up one to one with equal lengths, within the protocol's limits. */
    static void checkPairs(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(remote, "remote");
        if (local.isEmpty()) {
            throw new TransferException(Code.INVALID_PARAM, "no descriptors");
        }
        if (local.size() != remote.size()) {
            throw new TransferException(Code.MISMATCH, local.size() + " local descriptors, " + remote.size() + " remote");
        }
        if (local.size() > ControlFrame.MAX_RANGES) {
            throw new TransferException(Code.INVALID_PARAM, "more than " + ControlFrame.MAX_RANGES + " descriptors");
        }
        for (int i = 0; i < local.size(); i++) {
            if (local.get(i).length() != remote.get(i).length()) {
                throw new TransferException(Code.MISMATCH, "descriptor " + i + ": local " + local.get(i).length()
                        + " bytes, remote " + remote.get(i).length());
            }
        }
        if (notification != null) {
            checkNotification(notification);
        }
    }

    /**
     * Merges runs of descriptors that continue each other on both sides: descriptor i+1 starts where i
     * ends, locally and remotely, in the same local registration and the same published remote region
     * (so the merged range passes the same bounds checks at both ends). Compacts the arrays in place,
     * unpins the regions of the descriptors merged away and returns how many remain. A KV-cache post of
     * consecutive blocks becomes a few large descriptors: fewer wire chunks, fewer transport requests
     * and GPU operations per byte, nothing copied.
     *
     * @param remoteRegions the published region each remote range lies in (compared by identity)
     */
    static int mergeContiguous(long[] local, long[] remote, long[] lengths, LocalRegion[] regions,
                               Object[] remoteRegions) {
        int n = lengths.length;
        if (n < 2) {
            return n;
        }
        int out = 0;
        for (int i = 1; i < n; i++) {
            boolean continues = local[out] + lengths[out] == local[i] && remote[out] + lengths[out] == remote[i]
                    && regions[out] == regions[i] && remoteRegions[out] == remoteRegions[i];
            if (continues) {
                lengths[out] += lengths[i];
                regions[i].releaseRef();
                regions[i] = null;
            } else {
                out++;
                local[out] = local[i];
                remote[out] = remote[i];
                lengths[out] = lengths[i];
                LocalRegion r = regions[i];
                regions[i] = null;
                regions[out] = r;
                remoteRegions[out] = remoteRegions[i];
            }
        }
        return out + 1;
    }

    static void checkNotification(byte[] message) {
        Objects.requireNonNull(message, "message");
        if (message.length > ControlFrame.MAX_NOTIFICATION) {
            throw new TransferException(Code.INVALID_PARAM, "notification larger than " + ControlFrame.MAX_NOTIFICATION);
        }
    }
}
