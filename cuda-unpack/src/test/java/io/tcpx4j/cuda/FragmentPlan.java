package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Synthetic fragment lists shaped like TCPX receives, for the benchmark and the GPU tests: bounce
 * pages in a permuted order, destinations written once each. Offsets are relative to a bounce area
 * of {@link #bounceBytes()} and a destination of {@link #destinationBytes()}.
 *
 * @param receives         the receives, each at most {@link NetRequest#MAX_FRAGMENTS} fragments
 * @param bounceBytes      bounce area the fragments read
 * @param destinationBytes destination area the receives write
 * @param payloadBytes     bytes copied in all
 */
record FragmentPlan(List<Receive> receives, long bounceBytes, long destinationBytes, long payloadBytes) {

    static final int PAGE = 4096;

    /**
     * One receive.
     *
     * @param destinationOffset where the receive's destination starts in the destination area
     * @param size              the receive's posted size
     * @param fragments         {srcOff, len, dstOff} triples, dstOff relative to the receive
     */
    record Receive(long destinationOffset, int size, long[][] fragments) {
    }

    /**
     * Fixed-size fragments ({@code fragmentBytes} divides 4096): every bounce page holds
     * {@code 4096 / fragmentBytes} of them, pages permuted, destinations contiguous.
     */
    static FragmentPlan uniform(long totalBytes, int fragmentBytes, Random random) {
        return uniform(totalBytes, fragmentBytes, NetRequest.MAX_FRAGMENTS, Integer.MAX_VALUE, random);
    }

    /**
     * As {@link #uniform(long, int, Random)}, with at most {@code perReceive} fragments per receive
     * and bounce slots permuted only within windows of {@code window} slots (1: in order).
     */
    static FragmentPlan uniform(long totalBytes, int fragmentBytes, int perReceive, int window, Random random) {
        if (PAGE % fragmentBytes != 0) {
            throw new IllegalArgumentException("fragment size " + fragmentBytes + " must divide " + PAGE);
        }
        int count = (int) (totalBytes / fragmentBytes);
        int[] slots = new int[count];
        for (int first = 0; first < count; first += window) {
            int n = Math.min(window, count - first);
            int[] p = permutation(n, random);
            for (int i = 0; i < n; i++) {
                slots[first + i] = first + p[i];
            }
        }
        List<long[]> frags = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            frags.add(new long[] {(long) slots[i] * fragmentBytes, fragmentBytes, (long) i * fragmentBytes});
        }
        return group(frags, (long) count * fragmentBytes, (long) count * fragmentBytes, perReceive);
    }

    /**
     * What TCPX produces on a real network: segment pieces of 1 to 4096 bytes, each at a random
     * offset inside its own bounce page (pages permuted), packed back to back in the destination,
     * so source and destination alignments are unrelated.
     */
    static FragmentPlan tcpLike(long totalBytes, Random random) {
        List<int[]> sizes = new ArrayList<>();
        long sum = 0;
        while (sum < totalBytes) {
            int len = (int) Math.min(1 + random.nextInt(PAGE), totalBytes - sum);
            sizes.add(new int[] {len});
            sum += len;
        }
        int[] pages = permutation(sizes.size(), random);
        List<long[]> frags = new ArrayList<>(sizes.size());
        long dst = 0;
        for (int i = 0; i < sizes.size(); i++) {
            int len = sizes.get(i)[0];
            long src = (long) pages[i] * PAGE + random.nextInt(PAGE - len + 1);
            frags.add(new long[] {src, len, dst});
            dst += len;
        }
        return group(frags, (long) sizes.size() * PAGE, sum, NetRequest.MAX_FRAGMENTS);
    }

    /** Fragments in all receives. */
    int fragmentCount() {
        return receives.stream().mapToInt(r -> r.fragments().length).sum();
    }

    /** The plan's receives as completed requests over {@code bounce}; fragment tables in host memory. */
    Tables tables(long bounce, MemoryKind bounceKind) {
        return new Tables(this, bounce, bounceKind);
    }

    /** A completed receive whose fragment table sits at {@code fragmentsAddress} (owned elsewhere). */
    record TableRequest(int size, int fragmentCount, long fragmentsAddress, long bounceBase, long bounceBytes,
            MemoryKind bounceKind)
            implements NetRequest {
    }

    /** Writes {srcOff, len, dstOff} triples as a TCPX fragment table at {@code at}. */
    static void writeFragments(long at, long[][] fragments) {
        for (long[] f : fragments) {
            NativeMemory.putInt(at, (int) f[0]);
            NativeMemory.putInt(at + 4, (int) f[1]);
            NativeMemory.putLong(at + 8, f[2]);
            at += NetRequest.FRAGMENT_BYTES;
        }
    }

    /** Fragment tables for every receive of a plan, freed by {@link #close()}. <b>Not thread-safe.</b> */
    static final class Tables implements AutoCloseable {
        private final List<NetRequest> requests = new ArrayList<>();
        private final long memory;

        Tables(FragmentPlan plan, long bounce, MemoryKind bounceKind) {
            long total = 0;
            for (Receive r : plan.receives()) {
                total += (long) r.fragments().length * NetRequest.FRAGMENT_BYTES;
            }
            memory = NativeMemory.allocate(Math.max(16, total), 64);
            long at = memory;
            for (Receive r : plan.receives()) {
                writeFragments(at, r.fragments());
                requests.add(new TableRequest(r.size(), r.fragments().length, at, bounce, plan.bounceBytes(), bounceKind));
                at += (long) r.fragments().length * NetRequest.FRAGMENT_BYTES;
            }
        }

        List<NetRequest> requests() {
            return requests;
        }

        @Override
        public void close() {
            NativeMemory.free(memory);
        }
    }

    /** Splits fragments with destinations in ascending order into receives of at most {@code perReceive}. */
    private static FragmentPlan group(List<long[]> frags, long bounceBytes, long destinationBytes, int perReceive) {
        List<Receive> receives = new ArrayList<>();
        long payload = 0;
        for (int first = 0; first < frags.size(); first += perReceive) {
            int last = Math.min(frags.size(), first + perReceive);
            long base = frags.get(first)[2];
            long end = 0;
            long[][] table = new long[last - first][];
            for (int i = first; i < last; i++) {
                long[] f = frags.get(i);
                table[i - first] = new long[] {f[0], f[1], f[2] - base};
                end = Math.max(end, f[2] - base + f[1]);
                payload += f[1];
            }
            receives.add(new Receive(base, (int) end, table));
        }
        return new FragmentPlan(List.copyOf(receives), bounceBytes, destinationBytes, payload);
    }

    private static int[] permutation(int n, Random random) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }
}
