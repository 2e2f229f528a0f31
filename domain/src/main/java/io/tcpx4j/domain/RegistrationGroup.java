package io.tcpx4j.domain;

import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * One transport registration span shared by every region inside it: a host region's own range, or a
 * whole CUDA allocation (registrations of device memory are widened to their allocation and deduped,
 * since TCPX maps device memory per allocation and needs 4 KiB aligned spans). Registered lazily on
 * each comm that first sends from or receives into it.
 *
 * <p><b>Not thread-safe</b> for the per-comm map: the engine's agent alone touches it. The region count
 * is guarded by the registry.
 */
final class RegistrationGroup {

    final long key;
    final long address;
    final long size;
    final PtrType type;
    int regions;
    private final Map<Comm, MemoryRegistration> perComm = new IdentityHashMap<>();
    private int generation;

    RegistrationGroup(long key, long address, long size, PtrType type) {
        this.key = key;
        this.address = address;
        this.size = size;
        this.type = type;
    }

    /** The registration on {@code comm}, or null if this group is not registered there yet. */
    MemoryRegistration on(Comm comm) {
        return perComm.get(comm);
    }

    /** Changes whenever a registration is dropped, so that a caller holding one can tell it may be gone. */
    int generation() {
        return generation;
    }

    /** Registers the group on {@code comm} (which must not have it yet). */
    MemoryRegistration register(NetTransport transport, Comm comm) {
        MemoryRegistration mr = transport.register(comm, address, size, type);
        perComm.put(comm, mr);
        return mr;
    }

    /** Drops the registration of a comm about to close. */
    void forget(NetTransport transport, Comm comm) {
        generation++;
        MemoryRegistration mr = perComm.remove(comm);
        if (mr != null) {
            try {
                transport.deregister(comm, mr);
            } catch (RuntimeException e) {
                // the comm is going away anyway; its registrations die with it
            }
        }
    }

    /** Drops every registration (the last region of the group was deregistered). */
    void forgetAll(NetTransport transport) {
        generation++;
        for (Map.Entry<Comm, MemoryRegistration> e : perComm.entrySet()) {
            try {
                transport.deregister(e.getKey(), e.getValue());
            } catch (RuntimeException ignored) {
                // a failed comm's registrations die with it
            }
        }
        perComm.clear();
    }
}
