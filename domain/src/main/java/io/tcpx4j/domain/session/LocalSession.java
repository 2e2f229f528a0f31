package io.tcpx4j.domain.session;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.agent.CommandQueue;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.registration.LocalRegion;
import io.tcpx4j.domain.registration.RegionRegistry;
import io.tcpx4j.domain.transfer.PostedTransfer;

import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Transfers between two regions of this engine: plain copies on the caller's thread, never the network.
 *
 * <p>Thread-safe.
 */
public final class LocalSession implements Session {

    private final String name;
    private final CommandQueue agent;
    private final RegionRegistry registry;
    private final DeviceMemory memory;
    private final Queue<Notification> notifications;
    private final AtomicLong xferIds;

    public LocalSession(String name, CommandQueue agent, RegionRegistry registry, DeviceMemory memory,
                 Queue<Notification> notifications, AtomicLong xferIds) {
        this.name = name;
        this.agent = agent;
        this.registry = registry;
        this.memory = memory;
        this.notifications = notifications;
        this.xferIds = xferIds;
    }

    @Override
    public String peer() {
        return name;
    }

    @Override
    public Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
        return copy(local, remote, notification);
    }

    @Override
    public Transfer read(List<MemoryDescriptor> local, List<MemoryDescriptor> remote, byte[] notification) {
        return copy(remote, local, notification);
    }

    private Transfer copy(List<MemoryDescriptor> from, List<MemoryDescriptor> to, byte[] notification) {
        agent.checkOpen();
        Descriptors.checkPairs(from, to, notification);
        LocalRegion[] a = registry.pinLocal(from);
        LocalRegion[] b;
        try {
            b = registry.pinLocal(to);
        } catch (TransferException e) {
            LocalRegion.releaseAll(a);
            throw e;
        }
        long bytes = 0;
        for (MemoryDescriptor d : from) {
            bytes += d.length();
        }
        PostedTransfer x = new PostedTransfer(xferIds.incrementAndGet(), bytes);
        try {
            for (int i = 0; i < from.size(); i++) {
                if (from.get(i).length() > 0) {
                    memory.copy(to.get(i), from.get(i));
                }
            }
            if (notification != null) {
                notifications.add(new Notification(name, notification));
            }
            x.succeed();
        } catch (TransferException e) {
            x.fail(e);
        } finally {
            LocalRegion.releaseAll(a);
            LocalRegion.releaseAll(b);
        }
        return x;
    }

    @Override
    public void notify(byte[] message) {
        Objects.requireNonNull(message, "message");
        notifications.add(new Notification(name, message.clone()));
    }
}
