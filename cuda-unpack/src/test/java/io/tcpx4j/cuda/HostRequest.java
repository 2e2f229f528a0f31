package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;

/** A completed receive for tests: a fragment table in host memory over a given bounce area. */
final class HostRequest implements NetRequest, AutoCloseable {

    private final long table;
    private final FragmentPlan.TableRequest view;

    /** Fragments as triples {srcOff, len, dstOff}. */
    HostRequest(int size, long[][] fragments, long bounce, MemoryKind bounceKind) {
        this.table = NativeMemory.allocate(Math.max(1, (long) fragments.length * FRAGMENT_BYTES), 16);
        FragmentPlan.writeFragments(table, fragments);
        this.view = new FragmentPlan.TableRequest(size, fragments.length, table, bounce, bounceKind);
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
    public MemoryKind bounceKind() {
        return view.bounceKind();
    }

    @Override
    public void close() {
        NativeMemory.free(table);
    }
}
