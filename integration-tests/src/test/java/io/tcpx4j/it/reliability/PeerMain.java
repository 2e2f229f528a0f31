package io.tcpx4j.it.reliability;

import io.tcpx4j.api.EngineStats;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.Engine;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;

/**
 * A peer engine in its own JVM, driven over stdin/stdout by a fault test ({@link PeerProcess}).
 * It registers one region filled from a seed and prints {@code READY <conn-info> <metadata> <address>
 * <pid>} (Base64). Commands, one per line, each answered by one line:
 * <ul>
 *   <li>{@code CRC <address> <length>} -> {@code CRC <crc32c>}</li>
 *   <li>{@code PEER <name> <conn-info>}, {@code META <name> <metadata>} -> {@code OK}</li>
 *   <li>{@code WRITE|READ <peer> <local address> <remote address> <length>} -> {@code XFER <status> <code>}</li>
 *   <li>{@code STATS} -> {@code STATS <connections> <requests> <live ops> <regions> <comms> <registrations>}</li>
 *   <li>{@code QUIT} -> closes the engine and exits 0</li>
 * </ul>
 * End of stdin (the test JVM died) exits too, so no peer outlives its test.
 */
public final class PeerMain {

    private PeerMain() {
    }

    public static void main(String[] args) throws Exception {
        String name = args[0];
        long size = Long.parseLong(args[1]);
        long seed = Long.parseLong(args[2]);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Node node = new Node(Node.config(name));
        Engine engine = node.engine;
        RegisteredMemory region = node.randomRegion(size, seed);
        long base = region.descriptor().address();
        Base64.Encoder b64 = Base64.getEncoder();
        out.println("READY " + b64.encodeToString(engine.connInfo()) + " " + b64.encodeToString(region.publicMetadata())
                + " " + base + " " + ProcessHandle.current().pid());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        try {
            while ((line = in.readLine()) != null) {
                String[] a = line.trim().split(" ");
                try {
                    switch (a[0]) {
                        case "CRC" -> out.println("CRC " + Buffers.crc(Long.parseLong(a[1]), Long.parseLong(a[2])));
                        case "PEER" -> {
                            engine.loadPeer(a[1], Base64.getDecoder().decode(a[2]));
                            out.println("OK");
                        }
                        case "META" -> {
                            engine.loadRemoteMetadata(a[1], Base64.getDecoder().decode(a[2]));
                            out.println("OK");
                        }
                        case "WRITE", "READ" -> {
                            var local = List.of(Node.dram(Long.parseLong(a[2]), Long.parseLong(a[4])));
                            var remote = List.of(Node.dram(Long.parseLong(a[3]), Long.parseLong(a[4])));
                            Transfer t = a[0].equals("WRITE")
                                    ? engine.session(a[1]).write(local, remote, null)
                                    : engine.session(a[1]).read(local, remote, null);
                            TransferStatus s = Node.await(t, Duration.ofSeconds(30));
                            out.println("XFER " + s + " " + t.error().map(e -> e.code().name()).orElse("-"));
                        }
                        case "STATS" -> {
                            EngineStats s = engine.stats();
                            out.println("STATS " + s.connections() + " " + s.outstandingRequests() + " "
                                    + s.liveOperations() + " " + s.registeredRegions() + " "
                                    + node.transport.comms() + " " + node.transport.registrations());
                        }
                        case "QUIT" -> {
                            return;
                        }
                        default -> out.println("ERR unknown command " + a[0]);
                    }
                } catch (RuntimeException e) {
                    out.println("ERR " + e.toString().replace('\n', ' '));
                }
            }
        } finally {
            node.close();
            out.println("BYE");
        }
    }
}
