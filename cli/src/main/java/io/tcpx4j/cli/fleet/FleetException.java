package io.tcpx4j.cli.fleet;

import java.io.IOException;

/** A fleet run that cannot go on: a member failed or vanished, a barrier timed out, the group is full. */
public final class FleetException extends IOException {
    private static final long serialVersionUID = 1L;

    public FleetException(String message) {
        super(message);
    }

    public FleetException(String message, Throwable cause) {
        super(message, cause);
    }
}
