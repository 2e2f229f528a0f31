package io.tcpx4j.domain.control;

import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.idle.IdleSelector;
import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.FrameWriter;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import static org.assertj.core.api.Assertions.assertThat;

/** How a control stream whose reads follow the agent's poll ({@link IdleSelector#poll()}) decides that a read is due. */
class ControlStreamReadTest {

    private static final EngineConfig READER = EngineConfig.from(io.tcpx4j.api.EngineConfig.defaults("reader"));

    @Test
    void aReadStoppedAtItsBudgetIsDueAgainWithoutThePoll() throws IOException {
        int pings = 20_000; // 5 bytes each: about 12 fills of the reader's 8 KiB buffer
        try (ServerSocketChannel server = ServerSocketChannel.open();
             IdleSelector poll = new IdleSelector()) {
            server.setOption(StandardSocketOptions.SO_RCVBUF, 1 << 20); // holds every ping before any read
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel peer = SocketChannel.open(server.getLocalAddress())) {
                SocketChannel accepted = server.accept();
                ControlStream stream = ControlStream.accepted(accepted, READER);
                try {
                    stream.watch(poll);
                    assertThat(stream.readDue(0, true, false)).as("nothing sent, nothing polled").isFalse();

                    FrameWriter w = new FrameWriter();
                    for (int i = 0; i < pings; i++) {
                        w.ping();
                    }
                    ByteBuffer bytes = w.pending();
                    while (bytes.hasRemaining()) {
                        peer.write(bytes);
                    }
                    awaitPoll(poll, accepted, stream);

                    // until every ping is read: a read is due again exactly when the last one stopped at its
                    // budget (no poll runs in between); 100 KB sent at once fill the budget at least once
                    int[] seen = new int[1];
                    int budgetStops = 0;
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    while (seen[0] < pings && System.nanoTime() < deadline) {
                        int fills = stream.readFrames(() -> "peer", f -> {
                            assertThat(f).isInstanceOf(ControlFrame.Ping.class);
                            seen[0]++;
                        });
                        assertThat(fills).isBetween(0, 8);
                        assertThat(stream.readDue(0, true, false)).as("due again after a read of %d fills", fills).isEqualTo(fills == 8);
                        budgetStops += fills == 8 ? 1 : 0;
                    }
                    assertThat(seen[0]).isEqualTo(pings);
                    assertThat(budgetStops).as("reads that stopped at the budget").isPositive();
                    assertThat(stream.readFrames(() -> "peer", f -> seen[0]++)).as("drained").isZero();
                    assertThat(stream.readDue(0, true, false)).as("drained and nothing polled").isFalse();
                } finally {
                    stream.close();
                }
            }
        }
    }

    @Test
    void withoutThePollAReadIsDueWhileWaitingForAFrameAndOtherwiseEvery20Microseconds() throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel peer = SocketChannel.open(server.getLocalAddress())) {
                ControlStream stream = ControlStream.accepted(server.accept(), READER);
                try {
                    long t = 1_000_000_000L;
                    assertThat(stream.readDue(t, false, false)).as("never read yet").isTrue();
                    assertThat(stream.readDue(t + 1_000, false, false)).as("1 us later, chunks in flight").isFalse();
                    assertThat(stream.readDue(t + 2_000, false, true)).as("waiting for a frame").isTrue();
                    assertThat(stream.readDue(t + 21_000, false, false)).as("19 us after the last read").isFalse();
                    assertThat(stream.readDue(t + 22_000, false, false)).as("20 us after the last read").isTrue();
                    assertThat(stream.readDue(t + 50_000, true, true)).as("polled: the poll decides, and it saw nothing")
                            .isFalse();
                } finally {
                    stream.close();
                }
            }
        }
    }

    /**
     * Blocks until {@code socket} is readable (loopback delivery is not instantaneous; 10 s turn a delivery
     * that never comes into a failure), then polls once: the poll must report it.
     */
    private static void awaitPoll(IdleSelector poll, SocketChannel socket, ControlStream stream) throws IOException {
        try (Selector kernel = Selector.open()) {
            socket.register(kernel, SelectionKey.OP_READ);
            assertThat(kernel.select(10_000)).as("the socket turned readable within 10 s").isPositive();
        }
        poll.poll();
        assertThat(stream.readDue(0, true, false)).as("the poll reported the stream readable").isTrue();
    }
}
