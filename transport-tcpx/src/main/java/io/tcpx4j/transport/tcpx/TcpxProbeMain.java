package io.tcpx4j.transport.tcpx;

import com.sun.jna.Memory;

/**
 * The child side of the init probe: opens the plugin, binds its table, calls init and devices, and
 * prints one result line. Run by {@link PluginLoader} in a separate JVM so that a plugin that calls
 * exit(1) in init (TCPX does when the CUDA driver fails) ends only this process.
 *
 * <p>Output on stdout: {@code TCPX4J-PROBE OK <version> <devices> <name>} or
 * {@code TCPX4J-PROBE FAIL <message>}; the plugin's log goes to stderr.
 */
final class TcpxProbeMain {

    static final String PREFIX = "TCPX4J-PROBE ";

    private TcpxProbeMain() {
    }

    public static void main(String[] args) {
        try {
            NetPlugin plugin = NetPlugin.open(args[0]);
            PluginLogger logger = new PluginLogger(System.getLogger(PluginLogger.LOGGER_NAME));
            int rc = plugin.init(logger);
            if (rc != NcclResult.SUCCESS) {
                System.out.println(PREFIX + "FAIL " + plugin.name() + " init returned " + NcclResult.name(rc));
                System.exit(2);
            }
            Memory n = new Memory(4);
            n.setInt(0, 0);
            rc = plugin.devices(n);
            if (rc != NcclResult.SUCCESS) {
                System.out.println(PREFIX + "FAIL " + plugin.name() + " devices returned " + NcclResult.name(rc));
                System.exit(2);
            }
            System.out.println(PREFIX + "OK " + plugin.version().number() + " " + n.getInt(0) + " " + plugin.name());
            System.exit(0);
        } catch (Throwable t) {
            System.out.println(PREFIX + "FAIL " + String.valueOf(t.getMessage()).replace('\n', ' '));
            System.exit(2);
        }
    }
}
