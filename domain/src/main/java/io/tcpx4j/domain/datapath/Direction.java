package io.tcpx4j.domain.datapath;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.registration.LocalRegion;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * One direction of a connection's data stream: the plans whose chunks are still to be posted, in the
 * announced order, and the sequence number of the next chunk (chunk k travels on channel k mod C).
 * Packed chunks travel through its staging pools: one of host memory, one of device memory per GPU
 * that its runs lie on. A packed chunk of device memory is gathered by the unpacker (asynchronously)
 * before its send: {@link Gathered} holds such chunks, in order, until their copies finished.
 *
 * <p><b>Not thread-safe</b>: owned by the engine's agent.
 */
final class Direction {

    final boolean sends;
    final int window;
    final ArrayDeque<ChunkPlan> queue = new ArrayDeque<>();
    /** Packed chunks of device memory whose gather was queued, oldest first; posted before anything else. */
    final Gathered gathered = new Gathered();
    private final DeviceMemory memory;
    private final StagingPool host = new StagingPool();
    private StagingPool[] devices = new StagingPool[0];
    long seq;
    /** {@code seq} mod C, counted along with it: no 64-bit division per chunk. */
    int channel;

    Direction(boolean sends, int window, DeviceMemory memory) {
        this.sends = sends;
        this.window = window;
        this.memory = memory;
    }

    /** This direction's ring on {@code ch}. */
    RequestRing ring(DataChannel ch) {
        return sends ? ch.tx : ch.rx;
    }

    /**
     * Takes a free staging buffer for a run of {@code kind} memory on GPU {@code device} (host memory: the
     * one host pool; device memory: the pool of that GPU, made on first use). Returns its name, {@code pool
     * * SLOTS + buffer}, for {@link #address}, {@link #region} and {@link #give}; -1 if the pool has none free.
     */
    int take(MemoryKind kind, int device) {
        int pool = kind == MemoryKind.DRAM ? 0 : device + 1;
        if (pool > 0) {
            if (pool > devices.length) {
                devices = Arrays.copyOf(devices, pool);
            }
            if (devices[pool - 1] == null) {
                devices[pool - 1] = new StagingPool(memory, kind, device);
            }
        }
        int buffer = poolOf(pool).take();
        return buffer < 0 ? -1 : pool * StagingPool.SLOTS + buffer;
    }

    long address(int staged) {
        return poolOf(staged / StagingPool.SLOTS).address(staged % StagingPool.SLOTS);
    }

    /** The region of staged buffer {@code staged} (for the transport registration). */
    LocalRegion region(int staged) {
        return poolOf(staged / StagingPool.SLOTS).region();
    }

    /** Gives staged buffer {@code staged} back to its pool. */
    void give(int staged) {
        poolOf(staged / StagingPool.SLOTS).give(staged % StagingPool.SLOTS);
    }

    private StagingPool poolOf(int pool) {
        return pool == 0 ? host : devices[pool - 1];
    }

    /** Moves to the next chunk's sequence number and channel. */
    void advance(int channels) {
        seq++;
        if (++channel == channels) {
            channel = 0;
        }
    }

    /** Frees every staging buffer (the comms they were registered on are closed). */
    void release() {
        queue.clear();
        gathered.clear();
        host.release();
        for (StagingPool p : devices) {
            if (p != null) {
                p.release();
            }
        }
    }

    /** A FIFO of gathered chunks; slots preallocated, so queueing one allocates nothing. */
    static final class Gathered {
        private static final int CAPACITY = StagingPool.SLOTS;
        private final ChunkPlan[] plans = new ChunkPlan[CAPACITY];
        private final int[] staged = new int[CAPACITY];
        private final int[] lengths = new int[CAPACITY];
        private final long[] tickets = new long[CAPACITY];
        private int head;
        private int count;

        boolean isEmpty() {
            return count == 0;
        }

        boolean isFull() {
            return count == CAPACITY;
        }

        /** A chunk of {@code plan} of {@code length} bytes gathered into staged buffer {@code stagedBuffer}. */
        void add(ChunkPlan plan, int stagedBuffer, int length) {
            int i = (head + count) % CAPACITY;
            plans[i] = plan;
            staged[i] = stagedBuffer;
            lengths[i] = length;
            tickets[i] = 0;
            count++;
        }

        /** Gives the last {@code n} chunks added the ticket of their gather. */
        void assignTicket(int n, long ticket) {
            for (int k = count - n; k < count; k++) {
                tickets[(head + k) % CAPACITY] = ticket;
            }
        }

        ChunkPlan headPlan() {
            return plans[head];
        }

        int headStaged() {
            return staged[head];
        }

        int headLength() {
            return lengths[head];
        }

        long headTicket() {
            return tickets[head];
        }

        void poll() {
            plans[head] = null;
            head = (head + 1) % CAPACITY;
            count--;
        }

        void clear() {
            while (count > 0) {
                poll();
            }
        }
    }
}
