package io.tcpx4j.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Logging of the CLI. The library logs through {@link System.Logger}, which the JDK routes to
 * java.util.logging; the CLI keeps that quiet (WARNING and above on stderr) unless {@code --verbose},
 * which turns tcpx4j's own loggers ({@code io.tcpx4j.*}) to debug and leaves every other library
 * (Guice, JCuda, Jackson) at warnings. Each record is one line on stderr; with {@code --verbose} a
 * record's exception follows it.
 */
final class Logs {

    /** The parent of every tcpx4j logger; held so that its level sticks (JUL keeps loggers weakly). */
    private static final Logger TCPX4J = Logger.getLogger("io.tcpx4j");
    /** The TCPX plugin's own log (transport-tcpx's PluginLogger); held so the level sticks. */
    private static final Logger PLUGIN = Logger.getLogger("io.tcpx4j.transport.tcpx.plugin");
    /** The one handler of the root logger: one line per record on the command's stderr. */
    private static final ToStream HANDLER = new ToStream();

    private Logs() {
    }

    /** As {@link #configure(boolean, PrintStream)}, on this process's stderr. */
    static void configure(boolean verbose) {
        configure(verbose, System.err);
    }

    /**
     * Verbose: io.tcpx4j.* at FINE (System.Logger's DEBUG), everything else at WARNING. Otherwise
     * WARNING everywhere, and the TCPX plugin's log at SEVERE. Records go to {@code err}, one line
     * each; the JDK's console handler (two lines a record) is removed, other handlers (a file handler
     * from -Djava.util.logging.config.file) stay.
     */
    static void configure(boolean verbose, PrintStream err) {
        TCPX4J.setLevel(verbose ? Level.FINE : null);
        // The TCPX plugin warns on every receive into host memory; keep it to errors unless asked.
        PLUGIN.setLevel(verbose ? Level.FINE : Level.SEVERE);
        Logger root = Logger.getLogger("");
        root.setLevel(Level.WARNING);
        boolean ours = false;
        for (Handler h : root.getHandlers()) {
            if (h instanceof java.util.logging.ConsoleHandler) {
                root.removeHandler(h);
            }
            ours |= h == HANDLER;
        }
        HANDLER.point(err, verbose);
        if (!ours) {
            root.addHandler(HANDLER);
        }
    }

    /**
     * Holds every record from now on instead of printing it, until {@link Held#release()} prints them
     * or {@link Held#discard()} drops them: a bench run that fails reports its cause in one line, and
     * the warnings the engine logged on the way there (a connection lost with transfers in flight)
     * say the same again.
     */
    static Held hold() {
        Held h = new Held();
        HANDLER.held = h;
        return h;
    }

    /** Records held by {@link #hold()}. */
    static final class Held {
        private final List<LogRecord> records = new ArrayList<>();

        private synchronized void add(LogRecord r) {
            records.add(r);
        }

        /** Prints the held records and stops holding. */
        void release() {
            List<LogRecord> out;
            synchronized (this) {
                out = new ArrayList<>(records);
                records.clear();
            }
            if (HANDLER.held == this) {
                HANDLER.held = null;
            }
            out.forEach(HANDLER::print);
        }

        /** Drops the held records and stops holding. */
        synchronized void discard() {
            records.clear();
            if (HANDLER.held == this) {
                HANDLER.held = null;
            }
        }
    }

    /** Writes each record as one line to a stream that {@link #configure} chooses. */
    private static final class ToStream extends Handler {
        private volatile PrintStream err = System.err;
        private volatile Formatter lines = new OneLine(false);
        private volatile Held held;

        void point(PrintStream to, boolean verbose) {
            err = to;
            lines = new OneLine(verbose);
            setLevel(verbose ? Level.FINE : Level.WARNING);
        }

        @Override
        public void publish(LogRecord r) {
            if (!isLoggable(r)) {
                return;
            }
            Held h = held;
            if (h != null) {
                h.add(r);
                return;
            }
            print(r);
        }

        void print(LogRecord r) {
            PrintStream to = err;
            to.print(lines.format(r));
            to.flush();
        }

        @Override
        public void flush() {
            err.flush();
        }

        @Override
        public void close() {
            flush();
        }
    }

    /**
     * "tcpx4j: warning: message (logger)" on one line; the JDK's default format takes two lines per
     * record (date and source, then level and message).
     */
    static final class OneLine extends Formatter {
        private final boolean withStackTraces;

        OneLine(boolean withStackTraces) {
            this.withStackTraces = withStackTraces;
        }

        @Override
        public String format(LogRecord r) {
            String level = r.getLevel().intValue() >= Level.SEVERE.intValue() ? "error"
                    : r.getLevel().intValue() >= Level.WARNING.intValue() ? "warning"
                    : r.getLevel().intValue() >= Level.INFO.intValue() ? "info" : "debug";
            StringBuilder b = new StringBuilder("tcpx4j: ").append(level).append(": ")
                    .append(Main.oneLine(formatMessage(r)));
            if (r.getLoggerName() != null) {
                b.append(" (").append(r.getLoggerName()).append(')');
            }
            if (r.getThrown() != null) {
                if (withStackTraces) {
                    java.io.StringWriter w = new java.io.StringWriter();
                    r.getThrown().printStackTrace(new java.io.PrintWriter(w));
                    b.append(System.lineSeparator()).append(w.toString().stripTrailing());
                } else {
                    b.append(": ").append(Main.oneLine(String.valueOf(r.getThrown())));
                }
            }
            return b.append(System.lineSeparator()).toString();
        }
    }
}
