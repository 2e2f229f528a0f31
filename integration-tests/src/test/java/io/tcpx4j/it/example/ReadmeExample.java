package io.tcpx4j.it.example;

import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.api.HostBuffer;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferEngines;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The first example of README.md's "Using the library" section as a program: an application that holds
 * nothing but {@code io.tcpx4j.api} types and a transport, with no injector. The README's second code block
 * is the region between the {@code tag::readme} markers below, its first the imports above.
 * {@link ReadmeExampleIT} runs it in the tests' JVM and in one whose class path holds only the api, the
 * engine, the loopback transport and Agrona, and keeps README and file equal. No test library here: the
 * second JVM has none.
 */
public final class ReadmeExample {

    /** What the example leaves for the tests to check: the notification, the bytes, what else was queued. */
    record Outcome(Notification note, byte[] landed, List<Notification> queuedBesides) {
    }

    private ReadmeExample() {
    }

    static Outcome run() throws Exception {
        // tag::readme[]
        // Two engines over the loopback transport (kernel TCP, any machine). On A3 hosts pass a TcpxTransport
        // instead, and for GPU memory (MemoryDescriptor.vram) cuda-unpack's CudaDeviceMemory and
        // CudaScatterGather to TransferEngines.create(config, transport, memory, scatterGather).
        try (TransferEngine prefill = TransferEngines.create(EngineConfig.defaults("prefill-0"),
                     new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false)));
             TransferEngine decode = TransferEngines.create(EngineConfig.defaults("decode-0"),
                     new LoopbackTransport(LoopbackConfig.defaults().withDevmem(false)))) {
            // On the target, a notification means every byte of its transfer is in place.
            BlockingQueue<Notification> notes = new LinkedBlockingQueue<>();
            decode.onNotification(notes::add);

            try (HostBuffer source = HostBuffer.allocate(1 << 20);
                 HostBuffer destination = HostBuffer.allocate(1 << 20);
                 RegisteredMemory sourceReg = prefill.register(source.descriptor());
                 RegisteredMemory destinationReg = decode.register(destination.descriptor())) {
                // Normally sent between processes out of band: conn-info and region metadata.
                prefill.loadPeer("decode-0", decode.connInfo());
                prefill.loadRemoteMetadata("decode-0", destinationReg.publicMetadata());

                byte[] kv = "KV-cache blocks of layer 7".getBytes(StandardCharsets.UTF_8);
                source.put(0, kv);
                Transfer t = prefill.session("decode-0").write(
                        List.of(source.descriptor().slice(0, kv.length)),
                        List.of(destination.descriptor().slice(4096, kv.length)),
                        "layer-7".getBytes(StandardCharsets.UTF_8));
                if (t.await(Duration.ofSeconds(10)) != TransferStatus.DONE) {
                    throw t.error().orElseThrow(() -> new IllegalStateException("write timed out"));
                }

                Notification note = notes.poll(10, TimeUnit.SECONDS);
                byte[] landed = new byte[kv.length];
                destination.get(4096, landed);
                if (note == null || !Arrays.equals(landed, kv)) {
                    throw new IllegalStateException("notification " + note + ", bytes " + Arrays.toString(landed));
                }
                // end::readme[]
                return new Outcome(note, landed, decode.drainNotifications());
                // tag::readme[]
            }
        }
        // end::readme[]
    }

    /** Runs the example and prints what landed and who notified; a failure ends the JVM with its exception. */
    public static void main(String[] args) throws Exception {
        Outcome o = run();
        System.out.println("landed '" + new String(o.landed(), StandardCharsets.UTF_8) + "', notified by "
                + o.note().agent() + " with '" + new String(o.note().message(), StandardCharsets.UTF_8) + "', "
                + o.queuedBesides().size() + " queued besides");
    }
}
