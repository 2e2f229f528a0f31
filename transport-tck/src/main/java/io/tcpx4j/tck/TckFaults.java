package io.tcpx4j.tck;

import java.time.Duration;
import java.util.Objects;

/**
 * Faults the conformance suite asks a transport with {@link io.tcpx4j.domain.port.out.Capability#FAULT_INJECTION}
 * to inject (see {@link NetTransportConformanceTest#newFaultyTransport(TckFaults)}).
 *
 * @param dropAfterBytes  send comms abort their connection after writing at least this many bytes; -1 never
 * @param completionDelay requests test done no earlier than this after their data moved
 * @param corruptHandle   listeners publish handles that connect rejects with INVALID_PARAM
 */
public record TckFaults(long dropAfterBytes, Duration completionDelay, boolean corruptHandle) {

    public TckFaults {
        Objects.requireNonNull(completionDelay, "completionDelay");
    }

    public static TckFaults dropAfter(long bytes) {
        return new TckFaults(bytes, Duration.ZERO, false);
    }

    public static TckFaults delay(Duration delay) {
        return new TckFaults(-1, delay, false);
    }

    public static TckFaults corruptHandles() {
        return new TckFaults(-1, Duration.ZERO, true);
    }
}
