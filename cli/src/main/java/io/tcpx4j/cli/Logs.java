package io.tcpx4j.cli;

import java.util.logging.ConsoleHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Logging of the CLI. The library logs through {@link System.Logger}, which the JDK routes to
 * java.util.logging; the CLI keeps that quiet (WARNING and above on stderr) unless {@code --verbose}.
 */
final class Logs {

    /** The TCPX plugin's own log (transport-tcpx's PluginLogger); held so the level sticks. */
    private static final Logger PLUGIN = Logger.getLogger("io.tcpx4j.transport.tcpx.plugin");

    private Logs() {
    }

    /** Sets the root java.util.logging level: FINE when verbose, WARNING otherwise. */
    static void configure(boolean verbose) {
        Level level = verbose ? Level.FINE : Level.WARNING;
        // The TCPX plugin warns on every receive into host memory; keep it to errors unless asked.
        PLUGIN.setLevel(verbose ? Level.FINE : Level.SEVERE);
        Logger root = Logger.getLogger("");
        root.setLevel(level);
        boolean console = false;
        for (Handler h : root.getHandlers()) {
            h.setLevel(level);
            console |= h instanceof ConsoleHandler;
        }
        if (!console) {
            ConsoleHandler h = new ConsoleHandler();
            h.setLevel(level);
            root.addHandler(h);
        }
    }
}
