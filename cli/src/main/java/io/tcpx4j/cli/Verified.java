package io.tcpx4j.cli;

import java.util.Map;
import java.util.TreeMap;

/**
 * What a {@code --check-consistency} check of one row found on the side that received the bytes.
 *
 * <p>Thread-safe (immutable).
 *
 * @param mismatches bytes that differ from the source's pattern
 * @param perGpu     bytes checked on each GPU, by the ordinal that the device memory reports for the buffer
 *                   (not the one asked for); empty where the buffers are host memory
 */
record Verified(long mismatches, Map<Integer, Long> perGpu) {

    static final Verified NONE = new Verified(0, Map.of());

    Verified {
        perGpu = Map.copyOf(perGpu);
    }

    /** Both checks together. */
    Verified plus(Verified other) {
        Map<Integer, Long> sum = new TreeMap<>(perGpu);
        other.perGpu.forEach((gpu, bytes) -> sum.merge(gpu, bytes, Long::sum));
        return new Verified(mismatches + other.mismatches, sum);
    }

    /** The checked bytes per GPU in ordinal order, or null where none were on a GPU (as reports show it). */
    Map<Integer, Long> perGpuOrNull() {
        return perGpu.isEmpty() ? null : new TreeMap<>(perGpu);
    }
}
