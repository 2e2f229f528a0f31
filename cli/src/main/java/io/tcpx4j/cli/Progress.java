package io.tcpx4j.cli;

import java.io.PrintStream;

/**
 * A one-line progress bar on stderr, redrawn in place. Only shown when stderr is a terminal
 * ({@link #forConsole}); otherwise every call is a no-op, so logs and pipes stay clean.
 *
 * <p><b>Not thread-safe.</b>
 */
class Progress {

    private static final int WIDTH = 30;

    private final PrintStream err;
    private long total;
    private long done;
    private long lastDraw;
    private boolean drawn;

    Progress(PrintStream err) {
        this.err = err;
    }

    /** A bar on {@code err} if this JVM has a console, else a silent one. */
    static Progress forConsole(PrintStream err) {
        return System.console() != null ? new Progress(err) : none();
    }

    static Progress none() {
        return new Progress(null);
    }

    /** Whether this bar draws anything. */
    boolean visible() {
        return err != null;
    }

    /** Sets the amount of work (any unit, e.g. iterations of all rows). */
    void start(long total) {
        this.total = Math.max(1, total);
        this.done = 0;
    }

    /** Records {@code n} more units done, redrawing at most every 100 ms. */
    void advance(long n, String label) {
        done += n;
        if (err == null) {
            return;
        }
        long now = System.nanoTime();
        if (drawn && now - lastDraw < 100_000_000L) {
            return;
        }
        lastDraw = now;
        drawn = true;
        int filled = (int) Math.min(WIDTH, done * WIDTH / total);
        err.print("\r[" + "#".repeat(filled) + " ".repeat(WIDTH - filled) + "] "
                + Math.min(100, done * 100 / total) + "% " + label + "\u001b[K");
        err.flush();
    }

    /** Clears the bar. */
    void finish() {
        if (err != null && drawn) {
            err.print("\r\u001b[K");
            err.flush();
            drawn = false;
        }
    }
}
