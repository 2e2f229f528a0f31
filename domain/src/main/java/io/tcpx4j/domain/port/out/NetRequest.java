package io.tcpx4j.domain.port.out;

import io.tcpx4j.api.MemoryKind;

/**
 * A posted isend or irecv. Owned by the transport; the engine must not keep it after the request
 * completed (send) or was consumed (receive): transports pool them.
 *
 * <p>A completed receive may have landed in a bounce area instead of its destination (TCPX devmem
 * receives, the loopback transport's devmem mode). Then {@link #fragmentCount()} is positive and the
 * engine must unpack fragment i, {@code len} bytes from {@code bounceBase() + srcOff} to
 * {@code destination + dstOff}, before calling {@link NetTransport#consumed(RecvComm, NetRequest)}.
 * Fragment records are 16 bytes each, native byte order: {@code u32 srcOff, u32 len, u64 dstOff}.
 * Read them through {@link io.tcpx4j.domain.memory.FragmentReader}, which checks every record
 * against {@link #bounceBytes()} and {@link #size()}.
 * The fragment accessors are valid from "tested done" until consumed; outside that window they are
 * undefined (test transports throw INVALID_PARAM).
 */
public interface NetRequest {

    /** Size of one fragment record. */
    int FRAGMENT_BYTES = 16;
    /** TCPX holds at most 2048 4-KiB pages per receive. */
    int MAX_FRAGMENTS = 2048;

    /** Bytes posted. (TCPX's test never writes the received size; the engine trusts the posted size.) */
    int size();

    /** Fragments to unpack; 0 when the data landed in place. Valid once the request tested done. */
    int fragmentCount();

    /** Native address of the fragment records (host-mapped, readable by CPU and GPU). */
    long fragmentsAddress();

    /** Address the fragments' srcOff are relative to. */
    long bounceBase();

    /**
     * Bytes from {@link #bounceBase()} that fragments may read: the whole bounce area. Every
     * fragment's {@code [srcOff, srcOff+len)} must lie inside it. Valid like the other fragment
     * accessors; 0 for a receive that landed in place.
     */
    long bounceBytes();

    /**
     * Where the bounce area lives: DRAM (host or host-mapped) or VRAM. Adapters may classify the bounce
     * base through {@code DeviceMemory.kindOf}.
     */
    MemoryKind bounceKind();
}
