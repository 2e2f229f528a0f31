package io.tcpx4j.cli;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The value of {@code --device-list}: CUDA device ordinals in the order a side's buffers go on them, or
 * {@code all} (every GPU of the host, in ordinal order).
 *
 * <p>Thread-safe (immutable).
 *
 * @param ordinals the ordinals given, or null for {@code all}
 */
record DeviceList(List<Integer> ordinals) {

    static final DeviceList ALL = new DeviceList(null);

    DeviceList {
        ordinals = ordinals == null ? null : List.copyOf(ordinals);
    }

    /**
     * Parses {@code all} or {@code N[,N...]}.
     *
     * @throws IllegalArgumentException saying what is wrong, for the user
     */
    static DeviceList parse(String text) {
        String t = text.strip();
        if (t.toLowerCase(Locale.ROOT).equals("all")) {
            return ALL;
        }
        List<Integer> ordinals = new ArrayList<>();
        Set<Integer> seen = new HashSet<>();
        for (String part : t.split(",", -1)) {
            String p = part.strip();
            if (p.isEmpty()) {
                throw new IllegalArgumentException("--device-list '" + text + "' has an empty entry: give GPU"
                        + " ordinals such as 0,1, or all");
            }
            int n;
            try {
                n = Integer.parseInt(p);
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 0) {
                // nixlbench's --device_list names the UCX network devices (mlx5_0, ...)
                throw new IllegalArgumentException("--device-list: '" + p + "' is not a GPU ordinal: give CUDA"
                        + " device numbers such as 0,1, or all (TCPX picks its NICs by"
                        + " NCCL_GPUDIRECTTCPX_SOCKET_IFNAME, not by this list)");
            }
            if (!seen.add(n)) {
                throw new IllegalArgumentException("--device-list " + text + " names GPU " + n + " twice");
            }
            ordinals.add(n);
        }
        return new DeviceList(ordinals);
    }

    boolean all() {
        return ordinals == null;
    }

    /**
     * The ordinals on a host of {@code count} GPUs.
     *
     * @throws IllegalArgumentException naming an ordinal the host does not have
     */
    List<Integer> resolve(int count) {
        if (ordinals == null) {
            return IntStream.range(0, count).boxed().toList();
        }
        for (int n : ordinals) {
            if (n >= count) {
                throw new IllegalArgumentException("--device-list: no GPU " + n + " on this host (CUDA reports "
                        + count + (count == 1 ? " GPU: 0)" : " GPUs: 0.." + (count - 1) + ")"));
            }
        }
        return ordinals;
    }

    /** As the user would write it. */
    @Override
    public String toString() {
        return ordinals == null ? "all" : ordinals.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    /** {@code 0,1} as a list, for messages and headers. */
    static String join(List<Integer> ordinals) {
        return ordinals.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
