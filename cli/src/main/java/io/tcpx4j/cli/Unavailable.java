package io.tcpx4j.cli;

/**
 * A selected capability (transport, memory kind) that this build or this machine cannot provide.
 * Commands report it like a bad flag value: one line on stderr and exit code 2.
 */
final class Unavailable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Unavailable(String message) {
        super(message);
    }
}
