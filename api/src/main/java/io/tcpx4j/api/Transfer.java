package io.tcpx4j.api;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * One posted READ or WRITE. It ends exactly once (DONE, FAILED or RELEASED) and that is the last
 * thing its completion stage ever reports.
 *
 * <p>Thread-safe. No method blocks except {@link #await(Duration)}.
 */
public interface Transfer {

    TransferStatus status();

    /** The error of a FAILED transfer (or CANCELED after release), else empty. */
    Optional<TransferException> error();

    /**
     * Completes normally when the transfer is DONE, exceptionally with a {@link TransferException}
     * when it fails or is released first.
     */
    CompletionStage<Transfer> completion();

    /**
     * Waits at most {@code timeout} for the transfer to end and returns its status
     * ({@code IN_PROGRESS} if the time ran out). Never throws for a failed transfer: look at
     * {@link #error()}.
     */
    TransferStatus await(Duration timeout) throws InterruptedException;

    /**
     * Gives the transfer up. Never blocks: a transfer still in flight is aborted in the background
     * (its memory must stay valid until the engine has drained it, which {@link #completion()}
     * reports) and ends RELEASED. Idempotent; a no-op on an ended transfer. The data of a released
     * transfer may or may not land, and its notification is delivered at most once.
     */
    void release();

    /** Total bytes this transfer moves. */
    long bytes();
}
