package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;

/** A completed receive for tests: a fragment table in host memory over a given bounce area. */
final class HostRequest implements NetRequest, AutoCloseable {

    private final int size;
    private final int count;
    private final long table;
    private final long bounce;
    private final MemoryKind bounceKind;

    /** Fragments as triples {srcOff, len, dstOff}. */
    HostRequest(int size, long[][] fragments, long bounce, MemoryKind bounceKind) {
        this.size = size;
        this.count = fragments.length;
        this.table = NativeMemory.allocate(Math.max(1, (long) count * FRAGMENT_BYTES), 16);
        for (int i = 0; i < count; i++) {
            long rec = table + (long) i * FRAGMENT_BYTES;
            NativeMemory.putInt(rec, (int) fragments[i][0]);
            NativeMemory.putInt(rec + 4, (int) fragments[i][1]);
            NativeMemory.putLong(rec + 8, fragments[i][2]);
        }
        this.bounce = bounce;
        this.bounceKind = bounceKind;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int fragmentCount() {
        return count;
    }

    @Override
    public long fragmentsAddress() {
        return table;
    }

    @Override
    public long bounceBase() {
        return bounce;
    }

    @Override
    public MemoryKind bounceKind() {
        return bounceKind;
    }

    @Override
    public void close() {
        NativeMemory.free(table);
    }
}
