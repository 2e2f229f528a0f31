package io.tcpx4j.cli;

/**
 * SIGINT/SIGTERM handling for long-running commands. A JVM that dies of SIGINT exits 130 after its
 * shutdown hooks; {@code serve} instead wants to stop gracefully and exit 0, so it replaces the
 * handlers through {@code sun.misc.Signal} (module jdk.unsupported), best effort: where that is not
 * possible the shutdown hook still closes everything.
 */
final class Signals {

    private static final System.Logger LOG = System.getLogger(Signals.class.getName());

    private Signals() {
    }

    /** Runs {@code action} on SIGINT and SIGTERM instead of exiting. */
    static void onInterrupt(Runnable action) {
        onInterrupt(exitCode -> action.run());
    }

    /**
     * Runs {@code action} on SIGINT and SIGTERM instead of exiting, with the exit code the signal
     * would have given (128 + its number: 130 for SIGINT, 143 for SIGTERM).
     */
    @SuppressWarnings("removal")
    static void onInterrupt(java.util.function.IntConsumer action) {
        for (String name : new String[] {"INT", "TERM"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), sig -> action.accept(128 + sig.getNumber()));
            } catch (RuntimeException | LinkageError e) {
                LOG.log(System.Logger.Level.DEBUG, "cannot handle SIG" + name + ": " + e);
            }
        }
    }
}
