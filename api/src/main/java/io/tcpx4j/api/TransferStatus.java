package io.tcpx4j.api;

/** Life cycle of a {@link Transfer}. {@code DONE}, {@code FAILED} and {@code RELEASED} are terminal. */
public enum TransferStatus {
    /** Posted; data is still moving. */
    IN_PROGRESS,
    /** Every byte is in place (and the notification, if any, was handed to the peer). */
    DONE,
    /** Ended with an error; {@link Transfer#error()} says which. */
    FAILED,
    /** Released by the application before it ended. */
    RELEASED;

    public boolean isTerminal() {
        return this != IN_PROGRESS;
    }
}
