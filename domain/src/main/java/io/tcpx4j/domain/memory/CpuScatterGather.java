package io.tcpx4j.domain.memory;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.ScatterGather;

/**
 * Unpacks fragments with the CPU, for host destinations and host bounce pages. Work happens in
 * {@link #add}; batches are therefore complete as soon as they are submitted.
 *
 * <p><b>Not thread-safe.</b>
 */
public final class CpuScatterGather implements ScatterGather {

    private final FragmentReader reader = new FragmentReader();
    private long lastTicket;
    private boolean pending;

    @Override
    public ScatterGather another() {
        return new CpuScatterGather();
    }

    @Override
    public void add(NetRequest request, long destination, MemoryKind destinationKind) {
        if (reader.reset(request) == 0) {
            return;
        }
        requireHost(destinationKind, request.bounceKind());
        unpack(reader, request, destination);
        pending = true;
    }

    @Override
    public void add(NetRequest request, long[] addresses, long[] lengths, int first, int end, MemoryKind kind) {
        if (reader.reset(request, addresses, lengths, first, end) == 0) {
            return;
        }
        requireHost(kind, request.bounceKind());
        while (reader.next()) {
            NativeMemory.copy(reader.source(), reader.destination(), reader.length());
        }
        pending = true;
    }

    @Override
    public void copy(long source, long destination, long length, MemoryKind kind) {
        requireHost(kind, MemoryKind.DRAM);
        NativeMemory.copy(source, destination, length);
        pending = true;
    }

    private static void requireHost(MemoryKind destinationKind, MemoryKind bounceKind) {
        if (destinationKind != MemoryKind.DRAM || bounceKind != MemoryKind.DRAM) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "the CPU scatter-gather copies host memory only; VRAM needs the CUDA one");
        }
    }

    /**
     * Copies every fragment of a completed receive, each checked by a {@link FragmentReader} first
     * (the fragments before a bad one are copied, nothing after it).
     *
     * @throws TransferException BACKEND for a malformed fragment table
     */
    public static void unpack(NetRequest request, long destination) {
        unpack(new FragmentReader(), request, destination);
    }

    /** {@link #unpack(NetRequest, long)} with the caller's reader (allocates nothing). */
    public static void unpack(FragmentReader reader, NetRequest request, long destination) {
        reader.reset(request, destination);
        while (reader.next()) {
            NativeMemory.copy(reader.source(), reader.destination(), reader.length());
        }
    }

    @Override
    public long submit() {
        if (!pending) {
            return 0;
        }
        pending = false;
        return ++lastTicket;
    }

    @Override
    public boolean isDone(long ticket) {
        return true;
    }

    /** The copies happen inside {@code add} and {@code copy}. */
    @Override
    public boolean completesOnSubmit() {
        return true;
    }
}
