package io.tcpx4j.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import java.util.List;

/**
 * The counters of one device of a transport, per direction (index {@link #SEND} or {@link #RECEIVE}):
 * requests posted, completed and failed, and bytes of the completed ones.
 *
 * <p>Thread-safe.
 */
final class DeviceMeters {

    static final int SEND = 0;
    static final int RECEIVE = 1;

    final Counter[] posted = new Counter[2];
    final Counter[] completed = new Counter[2];
    final Counter[] failed = new Counter[2];
    final Counter[] bytes = new Counter[2];

    DeviceMeters(MeterRegistry registry, Tags device, List<Meter> owned) {
        for (int d = SEND; d <= RECEIVE; d++) {
            Tags t = device.and("direction", d == SEND ? "send" : "receive");
            posted[d] = counter(registry, MeteredNetTransport.POSTED, "requests posted (isend, irecv)", t, owned);
            completed[d] = counter(registry, MeteredNetTransport.COMPLETED, "requests tested done", t, owned);
            failed[d] = counter(registry, MeteredNetTransport.FAILED, "requests whose test failed", t, owned);
            bytes[d] = Counter.builder(MeteredNetTransport.BYTES).baseUnit("bytes")
                    .description("bytes of the requests tested done").tags(t).register(registry);
            owned.add(bytes[d]);
        }
    }

    private static Counter counter(MeterRegistry registry, String name, String description, Tags tags, List<Meter> owned) {
        Counter c = Counter.builder(name).description(description).tags(tags).register(registry);
        owned.add(c);
        return c;
    }
}
