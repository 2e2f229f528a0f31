package io.tcpx4j.domain;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.protocol.ControlFrame;

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

    static void checkNotification(byte[] message) {
        Objects.requireNonNull(message, "message");
        if (message.length > ControlFrame.MAX_NOTIFICATION) {
            throw new TransferException(Code.INVALID_PARAM, "notification larger than " + ControlFrame.MAX_NOTIFICATION);
        }
    }
}
