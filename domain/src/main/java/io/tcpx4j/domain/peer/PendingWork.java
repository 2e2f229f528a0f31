package io.tcpx4j.domain.peer;

import io.tcpx4j.domain.transfer.Post;

/**
 * Work for a peer that waits until its connection is up: a transfer ({@link Transfer}) or a notification
 * sent on its own ({@link Notify}).
 */
sealed interface PendingWork permits PendingWork.Transfer, PendingWork.Notify {

    /** A validated READ or WRITE. */
    record Transfer(Post post) implements PendingWork {
    }

    /** A notification posted by {@code Session.notify}, not attached to a transfer. */
    record Notify(byte[] message) implements PendingWork {
    }
}
