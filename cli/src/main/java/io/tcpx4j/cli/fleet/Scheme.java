package io.tcpx4j.cli.fleet;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Who moves data to whom among the N workers of a benchmark group, by rank (nixlbench's
 * {@code --scheme} names are accepted):
 * <ul>
 *   <li>{@link #PAIRWISE}: rank 2i is the initiator of rank 2i+1 (N even);</li>
 *   <li>{@link #MANY_TO_ONE}: every other rank is an initiator of rank 0;</li>
 *   <li>{@link #ONE_TO_MANY}: rank 0 is the initiator of every other rank.</li>
 * </ul>
 * A target serves each of its initiators from a slice of its buffer of its own, and an initiator
 * with several targets moves each target's data from a slice of its own: slice {@link #slot} of both.
 *
 * <p>Thread-safe (immutable).
 */
public enum Scheme {
    PAIRWISE("pairwise"),
    MANY_TO_ONE("manytoone"),
    ONE_TO_MANY("onetomany");

    private final String label;

    Scheme(String label) {
        this.label = label;
    }

    /** The name on the command line and in reports (nixlbench's). */
    public String label() {
        return label;
    }

    /**
     * The scheme named {@code text}: nixlbench's spelling, or with hyphens ({@code many-to-one}).
     *
     * @throws IllegalArgumentException listing the names
     */
    public static Scheme parse(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
        for (Scheme s : values()) {
            if (s.label.equals(t)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown scheme '" + text + "': pairwise, manytoone or onetomany");
    }

    /** Why {@code workers} workers cannot run this scheme, or null when they can. */
    public String workersProblem(int workers) {
        if (workers < 2) {
            return "--workers must be at least 2, was " + workers;
        }
        if (this == PAIRWISE && workers % 2 != 0) {
            return "--scheme pairwise pairs rank 2i with rank 2i+1: --workers must be even, was " + workers;
        }
        return null;
    }

    /** The ranks {@code rank} moves data to or from as their initiator, in slot order. */
    public List<Integer> targetsOf(int rank, int workers) {
        return switch (this) {
            case PAIRWISE -> rank % 2 == 0 ? List.of(rank + 1) : List.of();
            case MANY_TO_ONE -> rank == 0 ? List.of() : List.of(0);
            case ONE_TO_MANY -> rank == 0 ? others(workers) : List.of();
        };
    }

    /** The ranks that move data to or from {@code rank} as their target, in slot order. */
    public List<Integer> initiatorsOf(int rank, int workers) {
        return switch (this) {
            case PAIRWISE -> rank % 2 == 1 ? List.of(rank - 1) : List.of();
            case MANY_TO_ONE -> rank == 0 ? others(workers) : List.of();
            case ONE_TO_MANY -> rank == 0 ? List.of() : List.of(0);
        };
    }

    /**
     * The slice that the pair (initiator, target) uses on {@code side}'s buffer: on the target the
     * initiator's place among its initiators, on the initiator the target's place among its targets.
     */
    public int slot(int side, int initiator, int target, int workers) {
        List<Integer> order = side == target ? initiatorsOf(target, workers) : targetsOf(initiator, workers);
        int at = order.indexOf(side == target ? initiator : target);
        if (at < 0) {
            throw new IllegalArgumentException("ranks " + initiator + " -> " + target + " are no pair of " + label);
        }
        return at;
    }

    /** Slices of the buffer that {@code rank} needs: one per peer, at least one. */
    public int slots(int rank, int workers) {
        return Math.max(1, Math.max(targetsOf(rank, workers).size(), initiatorsOf(rank, workers).size()));
    }

    private static List<Integer> others(int workers) {
        List<Integer> r = new ArrayList<>();
        for (int i = 1; i < workers; i++) {
            r.add(i);
        }
        return List.copyOf(r);
    }
}
