package io.tcpx4j.domain;

import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Progress;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferStatus;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Notifications received by a listener ({@code TransferEngine.onNotification}) instead of drained: each once,
 * in the order the peer sent them, none also queued; the queued ones handed over when the listener is set;
 * a listener that throws leaves the engine working. Both engines are pumped by hand on the test thread.
 */
class NotificationListenerTest {

    private static final int SIZE = 64 * 1024;
    /** Duty cycles after which a step that needs a few round trips has surely happened, or never will. */
    private static final int MAX_CYCLES = 100_000;

    @Test
    void aListenerGetsEachNotificationOnceInOrderAndNoneIsDrained() {
        try (StartedPair t = new StartedPair(Progress.defaults(), false, SIZE)) {
            List<String> got = new ArrayList<>();
            t.b.onNotification(n -> got.add(text(n)));

            for (int i = 0; i < 20; i++) {
                writeAndPump(t, "n" + i);
            }
            pumpUntil(t, () -> got.size() >= 20);

            assertThat(got).containsExactlyElementsOf(names("n", 20));
            assertThat(t.b.drainNotifications()).isEmpty();
            assertThat(t.b.stats().notificationsQueued()).isZero();
        }
    }

    @Test
    void notificationsQueuedBeforeTheListenerGoToItFirstOnTheSettingThread() {
        try (StartedPair t = new StartedPair(Progress.defaults(), false, SIZE)) {
            for (int i = 0; i < 3; i++) {
                writeAndPump(t, "early" + i);
            }
            pumpUntil(t, () -> t.b.stats().notificationsQueued() == 3);

            List<String> got = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            t.b.onNotification(n -> {
                got.add(text(n));
                threads.add(Thread.currentThread());
            });
            assertThat(got).containsExactly("early0", "early1", "early2");
            assertThat(threads).containsOnly(Thread.currentThread());
            assertThat(t.b.stats().notificationsQueued()).isZero();

            writeAndPump(t, "late");
            pumpUntil(t, () -> got.size() == 4);
            assertThat(got).containsExactly("early0", "early1", "early2", "late");
            assertThat(t.b.drainNotifications()).isEmpty();
        }
    }

    @Test
    void aListenerThatThrowsIsLoggedAndLeavesTheEngineWorking() {
        List<LogRecord> records = new ArrayList<>();
        Handler capture = new Handler() {
            @Override
            public synchronized void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger log = Logger.getLogger(NotificationInbox.class.getName());
        log.addHandler(capture);
        try (StartedPair t = new StartedPair(Progress.defaults(), false, SIZE)) {
            List<String> got = new ArrayList<>();
            t.b.onNotification(n -> {
                got.add(text(n));
                throw new IllegalStateException("listener fails on " + text(n));
            });

            for (int i = 0; i < 5; i++) {
                byte[] data = t.fill(i);
                writeAndPump(t, "n" + i);
                assertThat(t.received()).isEqualTo(data);
            }
            pumpUntil(t, () -> got.size() >= 5);

            assertThat(got).containsExactlyElementsOf(names("n", 5));
            assertThat(t.b.drainNotifications()).isEmpty();
            synchronized (capture) {
                assertThat(records).isNotEmpty();
                assertThat(records.get(0).getThrown()).hasMessage("listener fails on n0");
            }
        } finally {
            log.removeHandler(capture);
        }
    }

    @Test
    void withoutAListenerNotificationsQueueAgain() {
        try (StartedPair t = new StartedPair(Progress.defaults(), false, SIZE)) {
            List<String> got = new ArrayList<>();
            t.b.onNotification(n -> got.add(text(n)));
            writeAndPump(t, "heard");
            pumpUntil(t, () -> got.size() == 1);

            t.b.onNotification(null);
            writeAndPump(t, "queued");
            pumpUntil(t, () -> t.b.stats().notificationsQueued() == 1);

            assertThat(got).containsExactly("heard");
            assertThat(t.b.drainNotifications()).extracting(NotificationListenerTest::text).containsExactly("queued");
        }
    }

    @Test
    void notificationsAnEngineSendsItselfReachItsListenerOnThePostingThread() {
        try (StartedPair t = new StartedPair(Progress.defaults(), false, SIZE)) {
            List<Thread> threads = new ArrayList<>();
            List<String> got = new ArrayList<>();
            t.a.onNotification(n -> {
                threads.add(Thread.currentThread());
                got.add(n.agent() + ":" + text(n));
            });
            t.a.session("alpha").notify("self".getBytes(StandardCharsets.UTF_8));

            assertThat(got).containsExactly("alpha:self");
            assertThat(threads).containsExactly(Thread.currentThread());
            assertThat(t.a.drainNotifications()).isEmpty();
        }
    }

    private static void writeAndPump(StartedPair t, String note) {
        Transfer x = t.write(note.getBytes(StandardCharsets.UTF_8));
        pumpUntil(t, () -> x.status() != TransferStatus.IN_PROGRESS);
        assertThat(x.status()).isEqualTo(TransferStatus.DONE);
    }

    private static void pumpUntil(StartedPair t, BooleanSupplier done) {
        for (int i = 0; i < MAX_CYCLES && !done.getAsBoolean(); i++) {
            t.a.progress();
            t.b.progress();
        }
        assertThat(done.getAsBoolean()).as("reached within %d duty cycles", MAX_CYCLES).isTrue();
    }

    private static List<String> names(String prefix, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    private static String text(Notification n) {
        return new String(n.message(), StandardCharsets.UTF_8);
    }
}
