package io.tcpx4j.it.example;

import com.google.inject.Guice;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.inject.EngineLifecycle;
import io.tcpx4j.inject.EngineModule;
import io.tcpx4j.transport.loopback.LoopbackTransportModule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The second example of README.md's "Using the library" section, compiled and run: engines that an
 * application composes with Guice ({@code EngineModule} beside a transport module, started and stopped by
 * {@code EngineLifecycle}), one notifying the other, drained there. The README's fourth code block is the
 * region between the {@code tag::readme} markers below, its third the imports this example needs
 * ({@link ReadmeExampleIT} checks both).
 */
@Timeout(60)
class ReadmeGuiceExampleIT {

    @Test
    void theGuiceExampleComposesTwoEnginesThatNotifyEachOther() throws Exception {
        List<Notification> checked;
        // tag::readme[]
        // The same engines composed by Guice: EngineModule beside one transport module (on A3 hosts
        // TcpxTransportModule, plus CudaUnpackModule for GPU memory); EngineLifecycle starts and stops them.
        try (EngineLifecycle prefillNode = Guice.createInjector(
                     new EngineModule(EngineConfig.defaults("prefill-0")), new LoopbackTransportModule())
                     .getInstance(EngineLifecycle.class);
             EngineLifecycle decodeNode = Guice.createInjector(
                     new EngineModule(EngineConfig.defaults("decode-0")), new LoopbackTransportModule())
                     .getInstance(EngineLifecycle.class)) {
            TransferEngine prefill = prefillNode.start();
            TransferEngine decode = decodeNode.start();
            prefill.loadPeer("decode-0", decode.connInfo());
            prefill.session("decode-0").notify("layer-7 ready".getBytes(StandardCharsets.UTF_8));

            // Without a listener, notifications queue until drained.
            List<Notification> notes = decode.drainNotifications();
            for (long end = System.nanoTime() + 10_000_000_000L; notes.isEmpty() && System.nanoTime() < end; ) {
                Thread.sleep(1);
                notes = decode.drainNotifications();
            }
            if (notes.size() != 1) {
                throw new IllegalStateException("notifications " + notes);
            }
            // end::readme[]
            checked = notes;
            // tag::readme[]
        }
        // end::readme[]
        assertThat(checked).containsExactly(
                new Notification("prefill-0", "layer-7 ready".getBytes(StandardCharsets.UTF_8)));
    }
}
