package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;

/** A completed receive for tests: a fragment table in host memory over a given bounce area. */
final class HostRequest implements NetRequest, AutoCloseable {

    private final long table;
    private final FragmentPlan.TableRequest view;

    /**
     * Fragments as triples {srcOff, len, dstOff}, over a bounce area larger than any u32 srcOff + len
     * reaches (tests of the destination bound).
     */
    HostRequest(int size, long[][] fragments, long bounce, MemoryKind bounceKind) {
        this(size, fragments, bounce, 1L << 34, bounceKind);
    }

    /** Fragments as triples {srcOff, len, dstOff} over a bounce area of {@code bounceBytes}. */
    HostRequest(int size, long[][] fragments, long bounce, long bounceBytes, MemoryKind bounceKind) {
        this.table = NativeMemory.allocate(Math.max(1, (long) fragments.length * FRAGMENT_BYTES), 16);
        FragmentPlan.writeFragments(table, fragments);
        this.view = new FragmentPlan.TableRequest(size, fragments.length, table, bounce, bounceBytes, bounceKind);
    }

    @Override
    public int size() {
        return view.size();
    }

    @Override
    public int fragmentCount() {
        return view.fragmentCount();
    }

    @Override
    public long fragmentsAddress() {
        return table;
    }

    @Override
    public long bounceBase() {
        return view.bounceBase();
    }

    @Override
    public long bounceBytes() {
        return view.bounceBytes();
    }

    @Override
    public MemoryKind bounceKind() {
        return view.bounceKind();
    }

    @Override
    public void close() {
        NativeMemory.free(table);
    }
}
