package io.tcpx4j.domain.control;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ControlPollTest {

    @Test
    void tellsOnlyTheWatchersWhoseSocketHasBytes() throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open();
             ControlPoll poll = new ControlPoll()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            List<SocketChannel> writers = new ArrayList<>();
            List<SocketChannel> readers = new ArrayList<>();
            List<String> told = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    writers.add(SocketChannel.open(server.getLocalAddress()));
                    SocketChannel r = server.accept();
                    r.configureBlocking(false);
                    readers.add(r);
                    String name = "conn" + i;
                    poll.watch(r, () -> told.add(name));
                }
                assertThat(poll.poll()).as("nothing sent yet").isZero();
                assertThat(told).isEmpty();

                writers.get(1).write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
                awaitPoll(poll, readers, told);
                assertThat(told).containsExactly("conn1");

                told.clear();
                assertThat(poll.poll()).as("bytes not yet read: still readable").isEqualTo(1);
                assertThat(told).containsExactly("conn1");

                told.clear();
                readers.get(1).read(ByteBuffer.allocate(16));
                writers.get(2).close();
                awaitPoll(poll, readers, told);
                assertThat(told).as("the end of a stream is news too").containsExactly("conn2");
            } finally {
                for (SocketChannel c : writers) {
                    c.close();
                }
                for (SocketChannel c : readers) {
                    c.close();
                }
            }
        }
    }

    @Test
    void skipsAChannelClosedBeforeItIsWatched() throws IOException {
        try (ControlPoll poll = new ControlPoll()) {
            SocketChannel closed = SocketChannel.open();
            closed.close();
            List<String> told = new ArrayList<>();
            poll.watch(closed, () -> told.add("closed"));
            assertThat(poll.poll()).isZero();
            assertThat(told).isEmpty();
        }
    }

    /**
     * Blocks until one of {@code readers} is readable (loopback delivery is not instantaneous; 10 s turn a
     * delivery that never comes into a failure), then polls once.
     */
    private static void awaitPoll(ControlPoll poll, List<SocketChannel> readers, List<String> told)
            throws IOException {
        try (Selector kernel = Selector.open()) {
            for (SocketChannel r : readers) {
                r.register(kernel, SelectionKey.OP_READ);
            }
            assertThat(kernel.select(10_000)).as("a socket turned readable within 10 s").isPositive();
        }
        poll.poll();
        assertThat(told).as("a watcher was told").isNotEmpty();
    }
}
