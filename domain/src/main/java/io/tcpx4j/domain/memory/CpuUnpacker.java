package io.tcpx4j.domain.memory;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.Unpacker;

/**
 * Unpacks fragments with the CPU, for host destinations and host bounce pages. Work happens in
 * {@link #add}; batches are therefore complete as soon as they are submitted.
 *
 * <p><b>Not thread-safe.</b>
 */
public final class CpuUnpacker implements Unpacker {

    private long lastTicket;
    private boolean pending;

    @Override
    public void add(NetRequest request, long destination, MemoryKind destinationKind) {
        int count = request.fragmentCount();
        if (count == 0) {
            return;
        }
        if (destinationKind != MemoryKind.DRAM || request.bounceKind() != MemoryKind.DRAM) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "the CPU unpacker copies host memory only; VRAM needs the CUDA unpacker");
        }
        unpack(request, destination);
        pending = true;
    }

    /** Copies every fragment of a completed receive; validates the fragment table first. */
    public static void unpack(NetRequest request, long destination) {
        int count = request.fragmentCount();
        if (count < 0 || count > NetRequest.MAX_FRAGMENTS) {
            throw new TransferException(TransferException.Code.BACKEND, "fragment count " + count + " out of range");
        }
        long table = request.fragmentsAddress();
        long bounce = request.bounceBase();
        long size = Integer.toUnsignedLong(request.size());
        for (int i = 0; i < count; i++) {
            long rec = table + (long) i * NetRequest.FRAGMENT_BYTES;
            long srcOff = Integer.toUnsignedLong(NativeMemory.getInt(rec));
            long len = Integer.toUnsignedLong(NativeMemory.getInt(rec + 4));
            long dstOff = NativeMemory.getLong(rec + 8);
            if (dstOff < 0 || dstOff > size || len > size - dstOff) {
                throw new TransferException(TransferException.Code.BACKEND,
                        "fragment " + i + " [" + dstOff + ", +" + len + ") outside a receive of " + size + " bytes");
            }
            NativeMemory.copy(bounce + srcOff, destination + dstOff, len);
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
}
