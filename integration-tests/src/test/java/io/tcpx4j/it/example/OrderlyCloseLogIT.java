package io.tcpx4j.it.example;

import com.google.inject.Guice;
import io.tcpx4j.api.HostBuffer;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.inject.EngineLifecycle;
import io.tcpx4j.inject.EngineModule;
import io.tcpx4j.transport.loopback.LoopbackTransportModule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An orderly life (connect, transfer, disconnect, close) logs nothing at INFO or above: those levels
 * are for what a user must know. System.Logger goes to java.util.logging here, where a handler on
 * the {@code io.tcpx4j} logger captures every record.
 */
@Timeout(60)
class OrderlyCloseLogIT {

    private static EngineLifecycle node(String name) {
        return Guice.createInjector(new EngineModule(EngineConfig.defaults(name)), new LoopbackTransportModule())
                .getInstance(EngineLifecycle.class);
    }

    private static void writeOnce(TransferEngine from, TransferEngine to, String toName) throws Exception {
        try (HostBuffer src = HostBuffer.allocate(1 << 16);
             HostBuffer dst = HostBuffer.allocate(1 << 16);
             RegisteredMemory rs = from.register(src.descriptor());
             RegisteredMemory rd = to.register(dst.descriptor())) {
            from.loadPeer(toName, to.connInfo());
            from.loadRemoteMetadata(toName, rd.publicMetadata());
            assertThat(from.session(toName).write(List.of(src.descriptor()), List.of(dst.descriptor()), null)
                    .await(Duration.ofSeconds(10))).isEqualTo(TransferStatus.DONE);
        }
    }

    @Test
    void disconnectAndCloseLogBelowInfo() throws Exception {
        Logger tcpx4j = Logger.getLogger("io.tcpx4j");
        Level before = tcpx4j.getLevel();
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        capture.setLevel(Level.ALL);
        tcpx4j.setLevel(Level.ALL);
        tcpx4j.addHandler(capture);
        try {
            // one pair ends with disconnect() then close, the other with close alone (the peer sees a goodbye)
            try (EngineLifecycle a = node("orderly-a"); EngineLifecycle b = node("orderly-b")) {
                TransferEngine ea = a.start();
                TransferEngine eb = b.start();
                writeOnce(ea, eb, "orderly-b");
                ea.disconnect("orderly-b");
            }
            try (EngineLifecycle c = node("orderly-c"); EngineLifecycle d = node("orderly-d")) {
                writeOnce(c.start(), d.start(), "orderly-d");
            }
        } finally {
            tcpx4j.removeHandler(capture);
            tcpx4j.setLevel(before);
        }
        assertThat(records).as("the capture saw the engines' FINE records").isNotEmpty();
        assertThat(records).filteredOn(r -> r.getLevel().intValue() >= Level.INFO.intValue())
                .extracting(r -> r.getLevel() + " " + r.getLoggerName() + ": "
                        + java.text.MessageFormat.format(r.getMessage(), r.getParameters() == null ? new Object[0] : r.getParameters()))
                .isEmpty();
    }
}
