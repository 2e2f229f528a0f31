package io.tcpx4j.domain.registration;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.protocol.RefusalCode;
import io.tcpx4j.domain.protocol.RegionMetadata;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory registered with one engine: which ranges exist (local pins for posts, remote-access
 * admission for peers), how they group into transport registrations, and their deregistration once
 * no transfer pins them any more.
 *
 * <p>Thread-safe for {@link #register}, {@link #deregister}, {@link #pinLocal}, {@link #admitRemoteAccess},
 * {@link #discardRegion} and {@link #size}; {@link #reclaim} belongs to the first progress agent (the
 * {@code agent} queue given here), {@link #close} to whoever shuts the engine down after its agents stopped.
 */
public final class RegionRegistry implements LocalRegion.Owner {

    private final String engineName;
    private final DeviceMemory memory;
    /** The first progress agent: deregistrations finish on it. */
    private final Executor agent;

    // copy-on-write array sorted by start address; writers hold `this`
    private volatile LocalRegion[] regions = new LocalRegion[0];
    private final Map<Long, RegistrationGroup> deviceGroups = new HashMap<>();

    /** Groups retired so far: each connection drops its registrations of retired groups when this changes. */
    private final AtomicLong retirements = new AtomicLong();

    // agent only
    private final List<LocalRegion> deregistering = new ArrayList<>();
    // guarded by `this`
    private LocalRegion discard;

    public RegionRegistry(String engineName, DeviceMemory memory, Executor agent) {
        this.engineName = engineName;
        this.memory = memory;
        this.agent = agent;
    }

    public LocalRegion register(MemoryDescriptor m) {
        Objects.requireNonNull(m, "memory");
        if (m.length() == 0) {
            throw new TransferException(Code.INVALID_PARAM, "cannot register an empty range " + m);
        }
        MemoryKind actual = memory.kindOf(m.address());
        if (actual != m.kind()) {
            if (m.kind() == MemoryKind.VRAM && !memory.hasDevices()) {
                throw new TransferException(Code.NOT_SUPPORTED, "no GPU support in this engine: cannot register " + m);
            }
            throw new TransferException(Code.INVALID_PARAM, m + " is " + actual + " memory, not " + m.kind());
        }
        byte[] metadata = new RegionMetadata(engineName, m).encode();
        synchronized (this) {
            RegistrationGroup g;
            if (m.kind() == MemoryKind.VRAM) {
                MemoryDescriptor alloc = memory.allocationRange(m.address(), m.length());
                if (!alloc.contains(m.address(), m.length())) {
                    throw new TransferException(Code.INVALID_PARAM, m + " is not inside one allocation");
                }
                g = deviceGroups.computeIfAbsent(alloc.address(),
                        k -> new RegistrationGroup(k, alloc.address(), alloc.length(), PtrType.CUDA));
            } else {
                g = new RegistrationGroup(-1, m.address(), m.length(), PtrType.HOST);
            }
            g.addRegion();
            LocalRegion region = new LocalRegion(this, m, g, metadata);
            LocalRegion[] old = regions;
            LocalRegion[] next = Arrays.copyOf(old, old.length + 1);
            int at = old.length;
            while (at > 0 && Long.compareUnsigned(next[at - 1].range.address(), m.address()) > 0) {
                next[at] = next[at - 1];
                at--;
            }
            next[at] = region;
            regions = next;
            return region;
        }
    }

    /** Takes the region out of lookups at once; its registrations go once no transfer pins it. */
    @Override
    public void deregister(LocalRegion region) {
        synchronized (this) {
            LocalRegion[] old = regions;
            int idx = Arrays.asList(old).indexOf(region);
            if (idx < 0) {
                return;
            }
            LocalRegion[] next = new LocalRegion[old.length - 1];
            System.arraycopy(old, 0, next, 0, idx);
            System.arraycopy(old, idx + 1, next, idx, old.length - idx - 1);
            regions = next;
        }
        try {
            agent.execute(() -> deregistering.add(region));
        } catch (TransferException closed) {
            // the engine is closing: its agents no longer use the region
        }
    }

    /** Agent: finishes deregistrations whose regions no transfer pins any more. */
    public int reclaim() {
        int work = 0;
        for (int i = deregistering.size() - 1; i >= 0; i--) {
            LocalRegion region = deregistering.get(i);
            if (region.inflight() == 0) {
                finishDeregister(region);
                deregistering.remove(i);
                work++;
            }
        }
        return work;
    }

    private void finishDeregister(LocalRegion region) {
        RegistrationGroup g = region.group;
        boolean last;
        synchronized (this) {
            last = g.removeRegion();
            if (last && g.type == PtrType.CUDA) {
                deviceGroups.remove(g.key);
            }
        }
        if (last) {
            g.retire();
            retirements.incrementAndGet();
        }
    }

    /** Pins the local regions of every descriptor, or throws with nothing pinned. */
    public LocalRegion[] pinLocal(List<MemoryDescriptor> local) {
        LocalRegion[] out = new LocalRegion[local.size()];
        for (int i = 0; i < out.length; i++) {
            MemoryDescriptor d = local.get(i);
            LocalRegion r = find(d.address(), d.length(), d.kind());
            if (r == null || !r.acquire()) {
                LocalRegion.releaseAll(out);
                throw new TransferException(Code.NOT_FOUND, "descriptor " + i + " " + d
                        + " is not inside memory registered with " + engineName);
            }
            out[i] = r;
        }
        return out;
    }

    /**
     * Target-side check of remote ranges: each must lie inside one currently registered region. On
     * success the regions are pinned into {@code out} and NONE is returned; otherwise nothing stays pinned
     * and NOT_ALLOWED is returned.
     */
    public RefusalCode admitRemoteAccess(long[] addresses, long[] lengths, LocalRegion[] out) {
        for (int i = 0; i < addresses.length; i++) {
            LocalRegion r = find(addresses[i], lengths[i], null);
            if (r == null || !r.acquire()) {
                LocalRegion.releaseAll(out);
                Arrays.fill(out, null);
                return RefusalCode.NOT_ALLOWED;
            }
            out[i] = r;
        }
        return RefusalCode.NONE;
    }

    /** The engine's device memory (staging buffers of packed chunks are allocated through it). */
    public DeviceMemory memory() {
        return memory;
    }

    /** A host buffer of the largest chunk that refused WRITEs are drained into, shared by the agents. */
    public synchronized LocalRegion discardRegion() {
        if (discard == null) {
            MemoryDescriptor d = memory.allocate(MemoryKind.DRAM, EngineConfig.MAX_CHUNK, 0);
            discard = new LocalRegion(null, d, new RegistrationGroup(-1, d.address(), d.length(), PtrType.HOST),
                    new byte[0]);
        }
        return discard;
    }

    public long retirements() {
        return retirements.get();
    }

    public int size() {
        return regions.length;
    }

    /** At shutdown, after every agent stopped: finishes every pending deregistration and frees the discard buffer. */
    public synchronized void close() {
        for (LocalRegion region : deregistering) {
            finishDeregister(region);
        }
        deregistering.clear();
        if (discard != null) {
            memory.free(discard.range);
            discard = null;
        }
    }

    /** The open region containing {@code [address, address+length)}, of {@code kind} if non-null. */
    private LocalRegion find(long address, long length, MemoryKind kind) {
        LocalRegion[] rs = regions;
        int lo = 0;
        int hi = rs.length - 1;
        int last = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(rs[mid].range.address(), address) <= 0) {
                last = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        for (int i = last; i >= 0; i--) {
            LocalRegion r = rs[i];
            if (r.range.contains(address, length) && !r.isClosed() && (kind == null || r.range.kind() == kind)) {
                return r;
            }
        }
        return null;
    }
}
