package io.tcpx4j.domain.log;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RateLimitedLog}: a peer that makes the same record happen a thousand times writes one. */
class RateLimitedLogTest {

    /** A logger that keeps the messages it was given. */
    private static final class RecordingLogger implements System.Logger {
        final List<String> messages = new ArrayList<>();

        @Override
        public String getName() {
            return "recording";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            messages.add(msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            messages.add(format);
        }

        @Override
        public void log(Level level, Supplier<String> msgSupplier) {
            messages.add(msgSupplier.get());
        }
    }

    @Test
    void aFloodOfRefusalsWritesOneRecordAndCountsTheRest() {
        RecordingLogger logger = new RecordingLogger();
        RateLimitedLog log = new RateLimitedLog(logger);
        for (int i = 0; i < 1000; i++) {
            log.log(System.Logger.Level.WARNING, "{0}: refused WRITE {1} from {2}", "target", i, "hostile");
        }
        assertThat(logger.messages).containsExactly("target: refused WRITE 0 from hostile");
        assertThat(log.suppressed()).isEqualTo(999);
    }

    @Test
    void aMessageWithBracesAndQuotesIsWrittenAsItIs() {
        RecordingLogger logger = new RecordingLogger();
        new RateLimitedLog(logger).log(System.Logger.Level.ERROR, "it's {broken}", new IllegalStateException());
        assertThat(logger.messages).containsExactly("it's {broken}");
    }
}
