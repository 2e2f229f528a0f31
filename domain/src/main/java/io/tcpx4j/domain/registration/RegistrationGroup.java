package io.tcpx4j.domain.registration;

import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One transport registration span shared by every region inside it: a host region's own range, or a
 * whole CUDA allocation (registrations of device memory are widened to their allocation and deduped,
 * since TCPX maps device memory per allocation and needs 4 KiB aligned spans). Registered lazily on
 * each comm that first sends from or receives into it.
 *
 * <p>Each registration belongs to its comm and is made and dropped only by the progress agent that
 * drives that comm (the transport's rule): once the group's last region is deregistered the registry
 * {@link #retire retires} it, and each connection drops its own comms' registrations in its next duty
 * cycle ({@code DataChannels.dropRetired}) or when it closes. Thread-safe across comms; the
 * region count is guarded by the registry.
 */
public final class RegistrationGroup {

    final long key;
    final long address;
    final long size;
    final PtrType type;
    /** Regions inside the group; guarded by the registry. */
    private int regions;
    /** Comms do not override equals: keys compare by identity. */
    private final Map<Comm, MemoryRegistration> perComm = new ConcurrentHashMap<>();
    private final AtomicInteger generation = new AtomicInteger();
    private volatile boolean retired;

    public RegistrationGroup(long key, long address, long size, PtrType type) {
        this.key = key;
        this.address = address;
        this.size = size;
        this.type = type;
    }

    /** One more region lies in the group (under the registry's lock). */
    void addRegion() {
        regions++;
    }

    /** A region of the group was deregistered (under the registry's lock); true if it was the last. */
    boolean removeRegion() {
        return --regions == 0;
    }

    /** The registration on {@code comm}, or null if this group is not registered there yet. */
    public MemoryRegistration on(Comm comm) {
        return perComm.get(comm);
    }

    /** Changes whenever a registration is dropped, so that a caller holding one can tell it may be gone. */
    public int generation() {
        return generation.get();
    }

    /** Registers the group on {@code comm} (which must not have it yet). */
    public MemoryRegistration register(NetTransport transport, Comm comm) {
        MemoryRegistration mr = transport.register(comm, address, size, type);
        perComm.put(comm, mr);
        return mr;
    }

    /** Drops the registration on {@code comm} (closing, or the group retired); on the comm's agent. */
    public void forget(NetTransport transport, Comm comm) {
        generation.incrementAndGet();
        MemoryRegistration mr = perComm.remove(comm);
        if (mr != null) {
            try {
                transport.deregister(comm, mr);
            } catch (RuntimeException e) {
                // a failed comm's registrations die with it
            }
        }
    }

    /** The last region of the group was deregistered: the connections drop their registrations of it. */
    void retire() {
        retired = true;
    }

    public boolean isRetired() {
        return retired;
    }
}
