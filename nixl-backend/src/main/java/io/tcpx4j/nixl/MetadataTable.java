package io.tcpx4j.nixl;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import static io.tcpx4j.nixl.NixlArgs.descriptor;
import static io.tcpx4j.nixl.NixlArgs.requireAgent;
import static io.tcpx4j.nixl.NixlArgs.requireOut;

/**
 * The metadata ids of one {@link NixlBackend}, the stand-ins for NIXL's {@code nixlBackendMD*}: this
 * agent's registrations, the targets within this agent made of them, and peers' regions. The engine
 * hears of a peer's blob once, however many ids refer to it, and forgets it when the last of them is
 * unloaded. {@link TransferHandles} asks it only whether a descriptor lies inside the region an id
 * names ({@link #checkLocal}, {@link #checkRemote}).
 *
 * <p>Each method answers a NIXL status or throws {@link TransferException}, which the backend turns into
 * that exception's status.
 *
 * <p>Thread-safe: ids live in a concurrent map; the reference counts of peers' blobs change under that
 * map's monitor, so that threads racing on one blob never load it twice into the engine nor unload it
 * while an id still refers to it.
 */
final class MetadataTable {

    /** The backend's logger: everything one backend logs is routed under one name. */
    private static final System.Logger LOG = System.getLogger(NixlBackend.class.getName());

    private final TransferEngine engine;
    private final LongSupplier ids;
    private final Map<Long, Metadata> metadata = new ConcurrentHashMap<>();
    /** How many loadRemoteMD ids refer to one (agent, blob): the engine hears of it once. */
    private final Map<RemoteKey, Integer> remoteRefs = new ConcurrentHashMap<>();

    /**
     * @param ids the backend's id source, shared with {@link TransferHandles} so that no metadata id is
     *            ever also a transfer handle
     */
    MetadataTable(TransferEngine engine, LongSupplier ids) {
        this.engine = engine;
        this.ids = ids;
    }

    /** {@link NixlBackend#registerMem}. */
    int register(long addr, long len, int devId, int memType, long[] mdOut) {
        requireOut(mdOut);
        MemoryDescriptor range = descriptor(addr, len, devId, memType);
        RegisteredMemory registered = engine.register(range);
        long id = ids.getAsLong();
        metadata.put(id, new Local(registered));
        mdOut[0] = id;
        return NixlStatus.SUCCESS;
    }

    /** {@link NixlBackend#deregisterMem}. */
    int deregister(long md) {
        if (!(metadata.get(md) instanceof Local local) || !metadata.remove(md, local)) {
            throw new TransferException(Code.NOT_FOUND, "no registration with id " + md);
        }
        local.memory.close();
        return NixlStatus.SUCCESS;
    }

    /** {@link NixlBackend#getPublicData}. */
    int publicData(long md, byte[][] out) {
        requireOut(out);
        if (!(metadata.get(md) instanceof Local local)) {
            throw new TransferException(Code.NOT_FOUND, "no registration with id " + md);
        }
        out[0] = local.memory.publicMetadata();
        return NixlStatus.SUCCESS;
    }

    /** {@link NixlBackend#loadLocalMD}. */
    int loadLocal(long md, long[] out) {
        requireOut(out);
        if (!(metadata.get(md) instanceof Local local)) {
            throw new TransferException(Code.NOT_FOUND, "no registration with id " + md);
        }
        long id = ids.getAsLong();
        metadata.put(id, new LocalTarget(local));
        out[0] = id;
        return NixlStatus.SUCCESS;
    }

    /** {@link NixlBackend#loadRemoteMD}. */
    int loadRemote(long addr, long len, int devId, int memType, byte[] blob, String remoteAgent, long[] out) {
        requireOut(out);
        requireAgent(remoteAgent);
        if (blob == null) {
            throw new TransferException(Code.INVALID_PARAM, "no metadata blob");
        }
        MemoryDescriptor range = descriptor(addr, len, devId, memType);
        RemoteKey key = new RemoteKey(remoteAgent, ByteBuffer.wrap(blob.clone()));
        synchronized (remoteRefs) {
            if (!remoteRefs.containsKey(key)) {
                engine.loadRemoteMetadata(remoteAgent, blob);
            }
            remoteRefs.merge(key, 1, Integer::sum);
        }
        long id = ids.getAsLong();
        metadata.put(id, new Remote(remoteAgent, range, key));
        out[0] = id;
        return NixlStatus.SUCCESS;
    }

    /** {@link NixlBackend#unloadMD}. */
    int unload(long md) {
        Metadata m = metadata.get(md);
        if (!(m instanceof Remote || m instanceof LocalTarget) || !metadata.remove(md, m)) {
            throw new TransferException(Code.NOT_FOUND, "no loaded metadata with id " + md);
        }
        if (m instanceof Remote remote) {
            synchronized (remoteRefs) {
                Integer left = remoteRefs.merge(remote.key, -1, Integer::sum);
                if (left != null && left <= 0) {
                    remoteRefs.remove(remote.key);
                    engine.unloadRemoteMetadata(remote.agent, remote.key.blobBytes());
                }
            }
        }
        return NixlStatus.SUCCESS;
    }

    /**
     * Checks that local descriptor {@code i} lies inside the registration {@code md}: NOT_FOUND for an id
     * that is no registration, NOT_ALLOWED for a range outside it.
     */
    void checkLocal(MemoryDescriptor d, long md, int i) {
        checkInside(d, localRange(md), "local", i);
    }

    /**
     * Checks that remote descriptor {@code i} lies inside the region {@code md} names: a target from
     * {@link #loadLocal} or a registration when {@code self}, else a region of {@code remoteAgent}.
     * NOT_FOUND for an unknown id, INVALID_PARAM for another agent's region, NOT_ALLOWED for a range outside it.
     */
    void checkRemote(MemoryDescriptor d, long md, String remoteAgent, boolean self, int i) {
        checkInside(d, remoteRange(md, remoteAgent, self), "remote", i);
    }

    /** Deregisters every registration still held and forgets every id; a failure is logged, not thrown. */
    void deregisterAll() {
        for (Metadata m : metadata.values()) {
            if (m instanceof Local local) {
                try {
                    local.memory.close();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.DEBUG, "deregistration at close failed", e);
                }
            }
        }
        metadata.clear();
    }

    private MemoryDescriptor localRange(long md) {
        if (!(metadata.get(md) instanceof Local local)) {
            throw new TransferException(Code.NOT_FOUND, "no registration with id " + md);
        }
        return local.memory.descriptor();
    }

    private MemoryDescriptor remoteRange(long md, String remoteAgent, boolean self) {
        Metadata m = metadata.get(md);
        if (self) {
            if (m instanceof LocalTarget target) {
                return target.local.memory.descriptor();
            }
            if (m instanceof Local local) {
                return local.memory.descriptor();
            }
            throw new TransferException(Code.NOT_FOUND, "no local target metadata with id " + md);
        }
        if (!(m instanceof Remote remote)) {
            throw new TransferException(Code.NOT_FOUND, "no remote metadata with id " + md);
        }
        if (!remote.agent.equals(remoteAgent)) {
            throw new TransferException(Code.INVALID_PARAM,
                    "metadata " + md + " belongs to agent " + remote.agent + ", not " + remoteAgent);
        }
        return remote.range;
    }

    private static void checkInside(MemoryDescriptor d, MemoryDescriptor region, String side, int i) {
        if (d.kind() != region.kind() || !region.contains(d.address(), d.length())) {
            throw new TransferException(Code.NOT_ALLOWED, side + " descriptor " + i + " " + d
                    + " is not inside its metadata's region " + region);
        }
    }

    private sealed interface Metadata permits Local, LocalTarget, Remote {
    }

    private record Local(RegisteredMemory memory) implements Metadata {
    }

    private record LocalTarget(Local local) implements Metadata {
    }

    private record Remote(String agent, MemoryDescriptor range, RemoteKey key) implements Metadata {
    }

    private record RemoteKey(String agent, ByteBuffer blob) {
        byte[] blobBytes() {
            byte[] b = new byte[blob.remaining()];
            blob.duplicate().get(b);
            return b;
        }
    }
}
