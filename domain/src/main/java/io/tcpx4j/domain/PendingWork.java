package io.tcpx4j.domain;

/**
 * Work for a peer that waits until its connection is up: a transfer ({@link Post}) or a notification
 * sent on its own ({@link Notify}).
 */
sealed interface PendingWork permits Post, PendingWork.Notify {

    /** A notification posted by {@code Session.notify}, not attached to a transfer. */
    record Notify(byte[] message) implements PendingWork {
    }
}
