package io.tcpx4j.domain.log;

import java.text.MessageFormat;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A logger for what a peer can make happen as often as it likes (refused transfers, refused or failed
 * connections): at most one record per {@link #INTERVAL_NANOS}, the next one saying how many were left
 * out meanwhile, so that a hostile or broken peer cannot flood the log.
 *
 * <p>Thread-safe.
 */
public final class RateLimitedLog {

    /** The shortest time between two records. */
    static final long INTERVAL_NANOS = 10_000_000_000L;

    private final System.Logger logger;
    /** When the last record was written; starts an interval before construction so the first one is. */
    private final AtomicLong last = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);
    private final AtomicLong suppressed = new AtomicLong();

    public RateLimitedLog(System.Logger logger) {
        this.logger = logger;
    }

    /** Logs {@code format} with {@code args} ({@link MessageFormat}) unless a record was written lately. */
    public void log(System.Logger.Level level, String format, Object... args) {
        log(level, null, format, args);
    }

    /** Logs {@code message} with {@code thrown} unless a record was written lately. */
    public void log(System.Logger.Level level, String message, Throwable thrown) {
        log(level, thrown, message.replace("'", "''").replace("{", "'{'"));
    }

    private void log(System.Logger.Level level, Throwable thrown, String format, Object... args) {
        if (!logger.isLoggable(level)) {
            return;
        }
        long now = System.nanoTime();
        long prev = last.get();
        if (now - prev < INTERVAL_NANOS || !last.compareAndSet(prev, now)) {
            suppressed.incrementAndGet();
            return;
        }
        long left = suppressed.getAndSet(0);
        String text = MessageFormat.format(format, args)
                + (left > 0 ? " (" + left + " similar records left out in the last "
                + (INTERVAL_NANOS / 1_000_000_000L) + " s)" : "");
        if (thrown == null) {
            logger.log(level, text);
        } else {
            logger.log(level, text, thrown);
        }
    }

    /** Records left out since the last one written. */
    long suppressed() {
        return suppressed.get();
    }
}
