package io.tcpx4j.cli;

import java.io.PrintStream;
import java.util.function.LongSupplier;

/**
 * How far a bench run is, on stderr. On a terminal ({@link #forConsole}) a one-line bar redrawn in
 * place, weighted by transfers (every transfer of every row counts one, so that a row of small blocks
 * moves the bar as much as a row of large ones); elsewhere (a pipe, CI, a log file) one line per report
 * interval while the run goes on, so that a log shows a long row's progress without control characters;
 * or nothing ({@link #none()}).
 *
 * <p>Thread-safe: the bench's threads all report their transfers to one instance.
 */
class Progress {

    private static final int WIDTH = 30;
    private static final long REDRAW_NANOS = 100_000_000L;

    private enum Style { BAR, LINES, NONE }

    private final PrintStream err;
    private final Style style;
    private final long intervalNanos;
    private final LongSupplier clock;
    private long total;
    private long done;
    private String phase = "";
    private long phaseDone;
    private long phaseStart;
    private long lastDraw;
    private boolean drawn;

    private Progress(PrintStream err, Style style, long intervalNanos, LongSupplier clock) {
        this.err = err;
        this.style = style;
        this.intervalNanos = intervalNanos;
        this.clock = clock;
    }

    /** A bar on {@code err}, redrawn at most every 100 ms. */
    static Progress bar(PrintStream err) {
        return bar(err, System::nanoTime);
    }

    /** A bar on {@code err}, redrawn at most every 100 ms of {@code clock}. */
    static Progress bar(PrintStream err, LongSupplier clock) {
        return new Progress(err, Style.BAR, REDRAW_NANOS, clock);
    }

    /** A line on {@code err} each {@code intervalNanos} of {@code clock} while the run goes on. */
    static Progress lines(PrintStream err, long intervalNanos, LongSupplier clock) {
        return new Progress(err, Style.LINES, intervalNanos, clock);
    }

    /** A bar on {@code err} if this JVM has a console, else a line every {@code intervalNanos}. */
    static Progress forConsole(PrintStream err, long intervalNanos) {
        return System.console() != null ? bar(err) : lines(err, intervalNanos, System::nanoTime);
    }

    static Progress none() {
        return new Progress(null, Style.NONE, Long.MAX_VALUE, System::nanoTime);
    }

    /** Whether this bar draws in place. */
    boolean visible() {
        return style == Style.BAR;
    }

    /** Sets the amount of work: the transfers of every row, warm-up ones included. */
    synchronized void start(long total) {
        this.total = Math.max(1, total);
        this.done = 0;
    }

    /** What runs from now on ("warm-up", "row 3 of 8: 16K x 1"). */
    synchronized void phase(String label) {
        phase = label;
        phaseDone = 0;
        phaseStart = clock.getAsLong();
        if (style == Style.LINES) {
            lastDraw = phaseStart; // the first line comes one interval into the phase
        }
    }

    /** Records {@code n} more transfers done. */
    synchronized void advance(long n) {
        done += n;
        phaseDone += n;
        if (style == Style.NONE) {
            return;
        }
        long now = clock.getAsLong();
        if ((drawn || style == Style.LINES) && now - lastDraw < intervalNanos) {
            return;
        }
        lastDraw = now;
        drawn = true;
        // before start() (the warm-up) there is no total to measure against
        int percent = total == 0 ? 0 : (int) Math.min(100, done * 100 / total);
        if (style == Style.BAR) {
            int filled = total == 0 ? 0 : (int) Math.min(WIDTH, done * WIDTH / total);
            err.print("\r[" + "#".repeat(filled) + " ".repeat(WIDTH - filled) + "] "
                    + (total == 0 ? "" : percent + "% ") + phase + "\u001b[K");
        } else {
            err.println("tcpx4j bench: " + phase + ": " + phaseDone + " transfers in "
                    + (now - phaseStart) / 1_000_000_000L + " s" + (total == 0 ? "" : ", " + percent + "% of the run"));
        }
        err.flush();
    }

    /** Clears the bar. */
    synchronized void finish() {
        if (style == Style.BAR && drawn) {
            err.print("\r\u001b[K");
            err.flush();
            drawn = false;
        }
    }
}
