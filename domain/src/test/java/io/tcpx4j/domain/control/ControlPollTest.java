package io.tcpx4j.domain.control;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ControlPollTest {

    @Test
    void tellsOnlyTheWatchersWhoseSocketHasBytes() throws IOException, InterruptedException {
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
                awaitPoll(poll, told);
                assertThat(told).containsExactly("conn1");

                told.clear();
                assertThat(poll.poll()).as("bytes not yet read: still readable").isEqualTo(1);
                assertThat(told).containsExactly("conn1");

                told.clear();
                readers.get(1).read(ByteBuffer.allocate(16));
                writers.get(2).close();
                awaitPoll(poll, told);
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

    /** Polls until a watcher was told (loopback delivery is not instantaneous); fails after 10 s. */
    private static void awaitPoll(ControlPoll poll, List<String> told) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (told.isEmpty() && System.nanoTime() < deadline) {
            if (poll.poll() == 0) {
                Thread.sleep(1);
            }
        }
        assertThat(told).as("a watcher was told within 10 s").isNotEmpty();
    }
}
