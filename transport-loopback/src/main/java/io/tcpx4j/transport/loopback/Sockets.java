package io.tcpx4j.transport.loopback;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.Channel;
import java.nio.channels.SocketChannel;

/** Socket options every data socket gets, on both sides, and quiet closing. */
final class Sockets {

    private Sockets() {
    }

    static void configure(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    static void closeQuietly(Channel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing is all that is left to do with it
        }
    }
}
