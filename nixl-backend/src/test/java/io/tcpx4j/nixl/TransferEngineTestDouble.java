package io.tcpx4j.nixl;

import io.tcpx4j.api.EngineStats;
import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.api.TransferStatus;
import io.tcpx4j.domain.memory.NativeMemory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * An in-memory {@link TransferEngine} for unit tests of the NIXL backend: engines of one
 * {@link Network} copy host memory between each other on a worker thread, throttled so that large
 * transfers stay in flight long enough to be caught there. Only the api contract is reproduced
 * (validation codes, exactly-once notifications after the data, release, disconnect); no protocol.
 *
 * <p>Thread-safe.
 */
final class TransferEngineTestDouble implements TransferEngine {

    /** Engines that can reach each other, by name. */
    static final class Network {
        final Map<String, TransferEngineTestDouble> engines = new ConcurrentHashMap<>();
    }

    private static final int PIECE = 256 * 1024;

    private final String name;
    private final Network network;
    private final long bytesPerSecond;
    private final ExecutorService worker;
    private final Map<Long, MemoryDescriptor> registered = new ConcurrentHashMap<>();
    private final Set<String> peers = ConcurrentHashMap.newKeySet();
    private final Map<String, List<MemoryDescriptor>> remote = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Notification> inbox = new ConcurrentLinkedQueue<>();
    private volatile Consumer<Notification> listener;
    private final Set<Op> inFlight = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    TransferEngineTestDouble(String name, Network network, long bytesPerSecond) {
        this.name = name;
        this.network = network;
        this.bytesPerSecond = bytesPerSecond;
        this.worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "double-" + name);
            t.setDaemon(true);
            return t;
        });
        network.engines.put(name, this);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public RegisteredMemory register(MemoryDescriptor memory) {
        if (memory.kind() != MemoryKind.DRAM) {
            throw new TransferException(Code.NOT_SUPPORTED, "the test double moves host memory only");
        }
        registered.put(memory.address(), memory);
        byte[] blob = ByteBuffer.allocate(16).putLong(memory.address()).putLong(memory.length()).array();
        return new RegisteredMemory() {
            @Override
            public MemoryDescriptor descriptor() {
                return memory;
            }

            @Override
            public byte[] publicMetadata() {
                return blob.clone();
            }

            @Override
            public void close() {
                registered.remove(memory.address(), memory);
            }
        };
    }

    @Override
    public byte[] connInfo() {
        return ("double:" + name).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void loadPeer(String peer, byte[] connInfo) {
        String s = new String(connInfo, StandardCharsets.UTF_8);
        if (!s.startsWith("double:")) {
            throw new TransferException(Code.INVALID_PARAM, "not a connection info of the double");
        }
        peers.add(peer);
    }

    @Override
    public void loadRemoteMetadata(String peer, byte[] blob) {
        if (!peers.contains(peer)) {
            throw new TransferException(Code.NOT_FOUND, "unknown peer " + peer);
        }
        if (blob.length != 16) {
            throw new TransferException(Code.INVALID_PARAM, "bad metadata blob");
        }
        ByteBuffer b = ByteBuffer.wrap(blob);
        remote.computeIfAbsent(peer, p -> new ArrayList<>()).add(MemoryDescriptor.dram(b.getLong(), b.getLong()));
    }

    @Override
    public void unloadRemoteMetadata(String peer, byte[] blob) {
        ByteBuffer b = ByteBuffer.wrap(blob);
        MemoryDescriptor d = MemoryDescriptor.dram(b.getLong(), b.getLong());
        List<MemoryDescriptor> list = remote.get(peer);
        if (list != null) {
            list.remove(d);
        }
    }

    @Override
    public void connect(String peer) {
        if (!peers.contains(peer)) {
            throw new TransferException(Code.NOT_FOUND, "unknown peer " + peer);
        }
    }

    @Override
    public void disconnect(String peer) {
        for (Op op : inFlight) {
            if (op.peer.equals(peer)) {
                op.fail(new TransferException(Code.REMOTE_DISCONNECT, "disconnected from " + peer));
            }
        }
    }

    @Override
    public Session session(String peer) {
        if (!peer.equals(name) && !peers.contains(peer)) {
            throw new TransferException(Code.NOT_FOUND, "unknown peer " + peer);
        }
        return new Session() {
            @Override
            public String peer() {
                return peer;
            }

            @Override
            public Transfer write(List<MemoryDescriptor> local, List<MemoryDescriptor> remoteDescs, byte[] notif) {
                return start(peer, true, local, remoteDescs, notif);
            }

            @Override
            public Transfer read(List<MemoryDescriptor> local, List<MemoryDescriptor> remoteDescs, byte[] notif) {
                return start(peer, false, local, remoteDescs, notif);
            }

            @Override
            public void notify(byte[] message) {
                target(peer).deliver(new Notification(name, message));
            }
        };
    }

    @Override
    public synchronized void onNotification(Consumer<Notification> listener) {
        this.listener = listener;
        if (listener != null) {
            for (Notification n; (n = inbox.poll()) != null; ) {
                listener.accept(n);
            }
        }
    }

    private synchronized void deliver(Notification n) {
        Consumer<Notification> l = listener;
        if (l != null) {
            l.accept(n);
        } else {
            inbox.add(n);
        }
    }

    @Override
    public EngineStats stats() {
        return new EngineStats(0, 0, 0, 0, inbox.size(), 0);
    }

    @Override
    public List<Notification> drainNotifications() {
        List<Notification> out = new ArrayList<>();
        for (Notification n; (n = inbox.poll()) != null; ) {
            out.add(n);
        }
        return out;
    }

    @Override
    public void close() {
        closed = true;
        network.engines.remove(name, this);
        for (Op op : inFlight) {
            op.fail(new TransferException(Code.CANCELED, "engine closed"));
        }
        for (TransferEngineTestDouble other : network.engines.values()) {
            other.disconnect(name);
        }
        worker.shutdownNow();
        try {
            worker.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private TransferEngineTestDouble target(String peer) {
        TransferEngineTestDouble t = network.engines.get(peer);
        if (t == null || t.closed) {
            throw new TransferException(Code.REMOTE_DISCONNECT, peer + " is gone");
        }
        return t;
    }

    private Transfer start(String peer, boolean write, List<MemoryDescriptor> local, List<MemoryDescriptor> remoteDescs,
                           byte[] notif) {
        if (local.size() != remoteDescs.size()) {
            throw new TransferException(Code.MISMATCH, "lists differ in size");
        }
        boolean self = peer.equals(name);
        List<MemoryDescriptor> targetRegions = self ? List.copyOf(registered.values())
                : List.copyOf(remote.getOrDefault(peer, List.of()));
        long bytes = 0;
        for (int i = 0; i < local.size(); i++) {
            MemoryDescriptor l = local.get(i);
            MemoryDescriptor r = remoteDescs.get(i);
            if (l.length() != r.length()) {
                throw new TransferException(Code.MISMATCH, "descriptor " + i + " lengths differ");
            }
            if (registered.values().stream().noneMatch(m -> m.contains(l.address(), l.length()))
                    || targetRegions.stream().noneMatch(m -> m.contains(r.address(), r.length()))) {
                throw new TransferException(Code.NOT_ALLOWED, "descriptor " + i + " outside registered memory");
            }
            bytes += l.length();
        }
        Op op = new Op(peer, bytes);
        inFlight.add(op);
        byte[] message = notif == null ? null : notif.clone();
        worker.execute(() -> op.run(write, local, remoteDescs, message));
        return op;
    }

    private final class Op implements Transfer {
        final String peer;
        final long bytes;
        final CompletableFuture<Transfer> done = new CompletableFuture<>();
        final AtomicReference<TransferStatus> status = new AtomicReference<>(TransferStatus.IN_PROGRESS);
        volatile TransferException error;

        Op(String peer, long bytes) {
            this.peer = peer;
            this.bytes = bytes;
        }

        void run(boolean write, List<MemoryDescriptor> local, List<MemoryDescriptor> remoteDescs, byte[] notif) {
            try {
                TransferEngineTestDouble target = target(peer);
                for (int i = 0; i < local.size(); i++) {
                    MemoryDescriptor l = local.get(i);
                    MemoryDescriptor r = remoteDescs.get(i);
                    for (long off = 0; off < l.length(); off += PIECE) {
                        if (status.get() != TransferStatus.IN_PROGRESS) {
                            return;
                        }
                        long n = Math.min(PIECE, l.length() - off);
                        long src = write ? l.address() + off : r.address() + off;
                        long dst = write ? r.address() + off : l.address() + off;
                        NativeMemory.copy(src, dst, n);
                        TimeUnit.NANOSECONDS.sleep(n * 1_000_000_000L / bytesPerSecond);
                    }
                }
                if (status.compareAndSet(TransferStatus.IN_PROGRESS, TransferStatus.DONE)) {
                    if (notif != null) {
                        target.deliver(new Notification(name, notif));
                    }
                    done.complete(this);
                }
            } catch (TransferException e) {
                fail(e);
            } catch (InterruptedException e) {
                fail(new TransferException(Code.CANCELED, "engine closed"));
            } finally {
                inFlight.remove(this);
            }
        }

        void fail(TransferException e) {
            error = e;
            if (status.compareAndSet(TransferStatus.IN_PROGRESS, TransferStatus.FAILED)) {
                done.completeExceptionally(e);
            }
        }

        @Override
        public TransferStatus status() {
            return status.get();
        }

        @Override
        public Optional<TransferException> error() {
            return Optional.ofNullable(error);
        }

        @Override
        public CompletionStage<Transfer> completion() {
            return done;
        }

        @Override
        public TransferStatus await(Duration timeout) throws InterruptedException {
            try {
                done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // the status says what happened
            }
            return status.get();
        }

        @Override
        public void release() {
            TransferException e = new TransferException(Code.CANCELED, "released");
            if (status.compareAndSet(TransferStatus.IN_PROGRESS, TransferStatus.RELEASED)) {
                error = e;
                done.completeExceptionally(e);
            }
        }

        @Override
        public long bytes() {
            return bytes;
        }
    }
}
