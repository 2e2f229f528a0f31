package io.tcpx4j.domain.session;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.EngineConfig;
import io.tcpx4j.domain.agent.CommandQueue;
import io.tcpx4j.domain.peer.Peer;
import io.tcpx4j.domain.peer.PeerDirectory;
import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.registration.RegionRegistry;
import io.tcpx4j.domain.transfer.Packing;
import io.tcpx4j.domain.transfer.Post;
import io.tcpx4j.domain.transfer.PostedTransfer;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Transfers with one peer. Validates and pins on the caller's thread, then hands the post to the agent,
 * which starts it on the peer's connection or queues it until the connection is up.
 *
 * <p>Thread-safe.
 */
public final class RemoteSession implements Session {

    private final Peer peer;
    private final CommandQueue agent;
    private final RegionRegistry registry;
    private final PeerDirectory directory;
    private final AtomicLong xferIds;
    private final int inlineLimit;
    private final Packing hostPacking;
    private final Packing devicePacking;
    private final boolean packsDevice;

    /** The agent that a transfer's {@code await} drives on the caller's thread, or null (its thread does). */
    private final PostedTransfer.Driver callerDriven;
    /** How long a transfer's {@code await} watches its status before it parks. */
    private final long spinNanos;

    /**
     * {@code packsDevice}: whether this engine's unpacker gathers and scatters packed chunks of device memory;
     * {@code callerDriven}: the peer's agent where application threads drive it, else null.
     */
    public RemoteSession(Peer peer, CommandQueue agent, RegionRegistry registry, PeerDirectory directory, AtomicLong xferIds,
                  EngineConfig cfg, boolean packsDevice, PostedTransfer.Driver callerDriven) {
        this.peer = peer;
        this.agent = agent;
        this.registry = registry;
        this.directory = directory;
        this.xferIds = xferIds;
        this.inlineLimit = cfg.inlineLimit();
        this.hostPacking = Packing.of(MemoryKind.DRAM, cfg);
        this.devicePacking = Packing.of(MemoryKind.VRAM, cfg);
        this.packsDevice = packsDevice;
        this.callerDriven = callerDriven;
        this.spinNanos = cfg.progress().spin().toNanos();
    }

    @Override
    public String peer() {
        return peer.name();
    }

    @Override
    public Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
        return post(true, local, remote, notification);
    }

    @Override
    public Transfer read(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
        return post(false, local, remote, notification);
    }

    private Transfer post(boolean write, List<MemoryDescriptor> local, List<MemoryDescriptor> remote,
                          byte[] notification) {
        agent.checkOpen();
        Descriptors.checkPairs(local, remote, notification);
        int n = local.size();
        long[] la = new long[n];
        long[] ra = new long[n];
        long[] len = new long[n];
        MemoryDescriptor[] regionOf = new MemoryDescriptor[n];
        long bytes = 0;
        boolean remoteHost = true;
        boolean remoteDevice = true;
        for (int i = 0; i < n; i++) {
            MemoryDescriptor r = remote.get(i);
            MemoryDescriptor published = peer.publishedRegion(r.address(), r.length());
            if (published == null) {
                throw new TransferException(Code.NOT_FOUND, "remote descriptor " + i + " " + r
                        + " is not inside a region " + peer.name() + " published (load its metadata first)");
            }
            regionOf[i] = published;
            remoteHost &= published.kind() == MemoryKind.DRAM;
            remoteDevice &= published.kind() == MemoryKind.VRAM;
            la[i] = local.get(i).address();
            ra[i] = r.address();
            len[i] = r.length();
            bytes += len[i];
        }
        LocalRegion[] pinned = registry.pinLocal(local);
        int merged = Descriptors.mergeContiguous(la, ra, len, pinned, regionOf);
        if (merged < n) {
            la = Arrays.copyOf(la, merged);
            ra = Arrays.copyOf(ra, merged);
            len = Arrays.copyOf(len, merged);
            pinned = Arrays.copyOf(pinned, merged);
        }
        PostedTransfer x = new PostedTransfer(xferIds.incrementAndGet(), bytes, callerDriven, spinNanos);
        boolean localHost = LocalRegion.allHost(pinned);
        boolean inline = bytes <= inlineLimit && (remoteHost || !write) && localHost;
        // each side gathers or scatters packed chunks of one kind of memory that it reaches (device memory
        // through its unpacker), as its kind allows; a READ offers packing for its own side, and the target
        // decides for its side
        MemoryKind localKind = LocalRegion.oneKind(pinned);
        Packing packing = localHost ? hostPacking
                : localKind == MemoryKind.VRAM && packsDevice ? devicePacking : Packing.NONE;
        if (write) {
            packing = remoteHost ? packing.min(hostPacking) : remoteDevice ? packing.min(devicePacking) : Packing.NONE;
        }
        Post p = new Post(write, x, la, ra, len, pinned, notification == null ? null : notification.clone(), inline,
                packing);
        try {
            agent.execute(() -> {
                if (!p.xfer().isEnded()) {
                    directory.post(peer, p);
                }
            });
        } catch (TransferException e) {
            p.releaseRegions();
            throw e;
        }
        return x;
    }

    @Override
    public void notify(byte[] message) {
        Descriptors.checkNotification(message);
        byte[] m = message.clone();
        agent.execute(() -> directory.sendNotification(peer, m));
    }
}
