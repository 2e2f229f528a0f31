package io.tcpx4j.domain.idle;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@link IdleSelector}: a wait blocks in the kernel until a watched channel is ready or {@link IdleSelector#wake()}
 * is called, and a poll tells the watchers of the channels ready now. Every wait here asks for ten minutes: only
 * the event can end it before the test's 30 s bound, which turns a wait the event failed to end into a failure.
 */
class IdleSelectorTest {

    private static final long TEN_MINUTES_MILLIS = 600_000;
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void aWakeEndsAWaitInProgress() throws Exception {
        try (IdleSelector s = new IdleSelector()) {
            CountDownLatch deciding = new CountDownLatch(1);
            Thread driver = waiter(s, deciding);
            assertThat(deciding.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
            s.wake(); // before or during the select: either way the wait ends
            driver.join(BOUND.toMillis());
            assertThat(driver.isAlive()).as("still waiting after the wake").isFalse();
            assertThat(s.blocks()).isEqualTo(1);
        }
    }

    @Test
    void aTransportsHandlerLearnsItsKeyWhenAPollFindsItsChannelReady() throws Exception {
        try (IdleSelector s = new IdleSelector();
             ServerSocketChannel server = nonBlockingListener()) {
            List<SelectionKey> told = new ArrayList<>();
            SelectionKey key = s.register(server, SelectionKey.OP_ACCEPT, told::add);
            assertThat(key).isNotNull();
            assertThat(s.poll()).as("nothing to accept yet").isZero();
            assertThat(told).isEmpty();
            try (SocketChannel peer = SocketChannel.open(server.getLocalAddress())) {
                assertTimeoutPreemptively(BOUND, () -> {
                    while (s.poll() == 0) {
                        Thread.onSpinWait();
                    }
                });
                assertThat(told).containsExactly(key);
            }
            SocketChannel closed = SocketChannel.open();
            closed.close();
            assertThat(s.register(closed, SelectionKey.OP_READ, told::add)).as("a closed channel").isNull();
        }
    }

    @Test
    void aReadyChannelEndsTheWaitAndItsCallbackRuns() throws Exception {
        try (IdleSelector s = new IdleSelector();
             ServerSocketChannel server = nonBlockingListener()) {
            CountDownLatch told = new CountDownLatch(1);
            assertThat(s.watch(server, SelectionKey.OP_ACCEPT, told::countDown)).isNotNull();
            CountDownLatch deciding = new CountDownLatch(1);
            Thread driver = waiter(s, deciding);
            assertThat(deciding.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
            try (SocketChannel peer = SocketChannel.open(server.getLocalAddress())) {
                driver.join(BOUND.toMillis());
                assertThat(driver.isAlive()).as("still waiting with a connection to accept").isFalse();
                assertThat(told.getCount()).as("the listener's callback ran").isZero();
            }
        }
    }

    @Test
    void aWakeBeforeTheWaitSkipsItOnce() {
        try (IdleSelector s = new IdleSelector()) {
            s.wake();
            assertTimeoutPreemptively(BOUND, () -> s.await(TEN_MINUTES_MILLIS, () -> true));
            assertThat(s.blocks()).as("waits that blocked").isZero();
        }
    }

    @Test
    void workFoundWhileDecidingSkipsTheBlock() {
        try (IdleSelector s = new IdleSelector()) {
            assertTimeoutPreemptively(BOUND, () -> s.await(TEN_MINUTES_MILLIS, () -> false));
            assertThat(s.blocks()).as("waits that blocked").isZero();
        }
    }

    @Test
    void aPollTellsOnlyTheWatchersWhoseSocketHasBytes() throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open();
             IdleSelector poll = new IdleSelector()) {
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
                    poll.watch(r, SelectionKey.OP_READ, () -> told.add(name));
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
                assertThat(poll.blocks()).as("a poll never blocks").isZero();
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
    void aClosedChannelIsNotWatched() throws IOException {
        try (IdleSelector s = new IdleSelector()) {
            SocketChannel closed = SocketChannel.open();
            closed.close();
            assertThat(s.watch(closed, SelectionKey.OP_READ, null)).isNull();
            assertThat(s.poll()).isZero();
        }
    }

    /**
     * Blocks until one of {@code readers} is readable (loopback delivery is not instantaneous; 10 s turn a
     * delivery that never comes into a failure), then polls once.
     */
    private static void awaitPoll(IdleSelector poll, List<SocketChannel> readers, List<String> told)
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

    /** A listener on a free loopback port that never blocks. */
    private static ServerSocketChannel nonBlockingListener() throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        server.configureBlocking(false);
        return server;
    }

    /** A daemon thread that waits on {@code s}, counting {@code deciding} down as it decides to block. */
    private static Thread waiter(IdleSelector s, CountDownLatch deciding) {
        Thread t = new Thread(() -> s.await(TEN_MINUTES_MILLIS, () -> {
            deciding.countDown();
            return true;
        }), "idle-selector-test");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
