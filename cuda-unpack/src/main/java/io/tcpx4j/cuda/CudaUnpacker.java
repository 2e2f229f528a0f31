package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.FragmentReader;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.Unpacker;
import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import static jcuda.driver.JCudaDriver.cuMemcpyAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * {@link Unpacker} that scatters fragments with the tcpx4j unpack kernel on one GPU: every receive
 * {@link #add added} between two {@link #submit()}s goes out as one kernel launch (more only when
 * the batch outgrows {@link Settings#recordsPerLaunch()}), followed by one event whose ticket
 * {@link #isDone} polls. Consecutive batches take turns on {@link #STREAMS} streams: they are
 * independent (other receives, other bounce pages), so a batch may start while the one before it
 * finishes its last blocks, and each ticket covers its own batch only (tickets may complete out of
 * order).
 *
 * <p>Per receive, the CPU checks the fragment table ({@link FragmentReader}, as the CPU unpacker
 * does) and appends one record per fragment, with absolute addresses, to a
 * work list in pinned host memory, which the kernel reads in place (or, with
 * {@link Settings#recordsInDeviceMemory()} on, from a copy made on the batch's stream at launch).
 * Work lists are reused once the launch that read them finished; a batch that finds none free gets
 * a new one, so {@code add} and {@code submit} never wait for the GPU.
 *
 * <p>Packed chunks ({@link #add(NetRequest, long[], long[], int, int, MemoryKind)}) go into the same
 * work list, split where one descriptor ends and the next begins; so do plain {@link #copy copies} in
 * device memory (the gather of a packed chunk before its send).
 *
 * <p>Kinds: host destinations with host bounce pages (and copies in host memory) are copied by the
 * CPU at once; everything else runs on the GPU, which reaches host memory only when
 * it is pinned and mapped (from {@link CudaDeviceMemory#allocatePinned}, say), else {@code add}
 * throws NOT_SUPPORTED.
 *
 * <p><b>Not thread-safe</b>: driven by the engine's progress agent. Close it before its
 * {@link CudaDeviceMemory}.
 */
public final class CudaUnpacker implements Unpacker {

    /**
     * Tuning.
     *
     * @param recordsPerLaunch      records one work list holds: a launch covers at most this many
     *                              fragments (pieces of at most 64 KiB); 16 full TCPX receives of
     *                              2048 pages by default
     * @param recordsInDeviceMemory copy each work list to device memory (three small async copies on
     *                              the batch's stream) before the launch, instead of letting the
     *                              kernel read it in place from pinned host memory across PCIe. Off
     *                              by default: each warp fetches its unit's records coalesced, so the
     *                              in-place list costs about 1 point of throughput back to back at
     *                              4 KiB and 3-4 at 1 KiB (PCIe round trips where a launch starts and
     *                              ends) and is 30% faster for a launch after host work, where the
     *                              upload adds latency (docs/PERFORMANCE.md, H200)
     * @param ptx                   a PTX file to load instead of the shipped kernel, or null
     */
    public record Settings(int recordsPerLaunch, boolean recordsInDeviceMemory, Path ptx) {
        public static final Settings DEFAULT = new Settings(16 * NetRequest.MAX_FRAGMENTS, false, null);

        public Settings {
            if (recordsPerLaunch < 1 || WorkList.bytesFor(recordsPerLaunch) > Integer.MAX_VALUE) {
                throw new TransferException(TransferException.Code.INVALID_PARAM, "recordsPerLaunch " + recordsPerLaunch);
            }
        }
    }

    /** A work list and what launching it needs. */
    private static final class Slot {
        final MemoryDescriptor host;
        final MemoryDescriptor device; // null unless recordsInDeviceMemory
        final WorkList list;
        final int[] count = {0};
        final int[] unit = {1};
        final Pointer params;
        /** 0: free; OPEN: part of the batch not yet submitted; else the ticket that covers it. */
        long ticket;

        Slot(MemoryDescriptor host, MemoryDescriptor device, int capacity) {
            this.host = host;
            this.device = device;
            this.list = new WorkList(host.address(), capacity);
            long table = device != null ? device.address() : host.address(); // unified addressing
            // Built once: the launch only changes count[0] and unit[0], so launching allocates
            // nothing. Kernels without the 4th parameter (records per warp) do not read it.
            this.params = Pointer.to(Pointer.to(new long[] {table}), Pointer.to(new int[] {capacity}),
                    Pointer.to(count), Pointer.to(unit));
        }
    }

    private static final long OPEN = -1;

    private final CudaDeviceMemory memory;
    private final Contexts contexts;
    private final int device;
    private final Settings settings;
    private final UnpackKernel kernel;
    /**
     * Streams consecutive batches take turns on. Two let a launch overlap the previous one's ramp
     * down: +1.5 to +3 points back to back at 4 KiB (docs/PERFORMANCE.md, "cuda-unpack").
     */
    static final int STREAMS = 2;

    private final CUstream[] streams = new CUstream[STREAMS];
    /** The stream of the batch being built; the next one takes the next stream. */
    private int turn;
    private final EventRing events = new EventRing();
    private final List<Slot> ring = new ArrayList<>();
    private final List<Slot> batch = new ArrayList<>();
    private final WorkList.Overflow overflow = this::flush;
    private final FragmentReader reader = new FragmentReader();
    private int cursor;
    private Slot open;
    private boolean cpuWork;
    private long checkedHost;
    private long launches;
    private boolean closed;

    /** An unpacker on GPU {@code device} with {@link Settings#DEFAULT}. */
    public CudaUnpacker(CudaDeviceMemory memory, int device) {
        this(memory, device, Settings.DEFAULT);
    }

    public CudaUnpacker(CudaDeviceMemory memory, int device, Settings settings) {
        this(memory, device, settings, kernelFor(memory, device, settings));
    }

    /** An unpacker that launches {@code kernel} (loaded into {@code device}'s context); it closes it. */
    CudaUnpacker(CudaDeviceMemory memory, int device, Settings settings, UnpackKernel kernel) {
        this.memory = Objects.requireNonNull(memory, "memory");
        this.contexts = memory.contexts();
        this.device = device;
        this.settings = Objects.requireNonNull(settings, "settings");
        this.kernel = Objects.requireNonNull(kernel, "kernel");
        try {
            contexts.makeCurrent(device);
            for (int i = 0; i < STREAMS; i++) {
                CUstream stream = new CUstream();
                CudaCheck.check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
                streams[i] = stream;
            }
        } catch (TransferException e) {
            destroyStreams();
            kernel.close();
            throw e;
        }
    }

    @Override
    public void add(NetRequest request, long destination, MemoryKind destinationKind) {
        requireOpen();
        if (reader.reset(request, destination) == 0) {
            return;
        }
        if (destinationKind == MemoryKind.DRAM && request.bounceKind() != MemoryKind.DRAM) {
            requireMapped(destination, "destination");
        }
        queueFragments(request, destinationKind);
    }

    @Override
    public void add(NetRequest request, long[] addresses, long[] lengths, int first, int end, MemoryKind kind) {
        requireOpen();
        if (reader.reset(request, addresses, lengths, first, end) == 0) {
            return;
        }
        if (kind == MemoryKind.DRAM && request.bounceKind() != MemoryKind.DRAM) {
            for (int i = first; i < end; i++) {
                requireMapped(addresses[i], "destination");
            }
        }
        queueFragments(request, kind);
    }

    /**
     * Queues the fragments {@link #reader} was reset to, whose destinations are {@code kind} memory: host
     * to host the CPU copies at once, everything else goes into the batch's work list.
     */
    private void queueFragments(NetRequest request, MemoryKind kind) {
        if (kind == MemoryKind.DRAM && request.bounceKind() == MemoryKind.DRAM) {
            while (reader.next()) {
                NativeMemory.copy(reader.source(), reader.destination(), reader.length());
            }
            cpuWork = true;
            return;
        }
        if (request.bounceKind() == MemoryKind.DRAM) {
            requireMapped(request.bounceBase(), "bounce area");
        }
        if (open == null) {
            open = acquire();
        }
        if (open.list.appendIfFits(reader)) {
            return;
        }
        WorkList.validate(reader);
        keepAppending(open.list.append(reader, overflow));
    }

    @Override
    public void copy(long source, long destination, long length, MemoryKind kind) {
        requireOpen();
        if (length == 0) {
            return;
        }
        if (kind == MemoryKind.DRAM) {
            NativeMemory.copy(source, destination, length);
            cpuWork = true;
            return;
        }
        if (open == null) {
            open = acquire();
        }
        keepAppending(open.list.appendCopy(source, destination, length, overflow));
    }

    /** {@code last}, the list an append ended in, must be the open one (a full list was flushed and replaced). */
    private void keepAppending(WorkList last) {
        if (last != open.list) {
            throw new IllegalStateException("work list switched without flush");
        }
    }

    /** Device memory and host memory both (host destinations must be pinned and mapped to go to the GPU). */
    @Override
    public boolean reaches(MemoryKind kind) {
        return true;
    }

    @Override
    public long submit() {
        requireOpen();
        if (open != null && open.list.size() > 0) {
            launch(open);
            open = null;
        }
        long ticket;
        if (!batch.isEmpty()) {
            contexts.makeCurrent(device);
            ticket = events.record(streams[turn]);
            turn = (turn + 1) % STREAMS;
            for (Slot s : batch) {
                s.ticket = ticket;
            }
            batch.clear();
        } else if (cpuWork) {
            ticket = events.completed();
        } else {
            return 0;
        }
        cpuWork = false;
        return ticket;
    }

    @Override
    public boolean isDone(long ticket) {
        requireOpen();
        return events.isDone(ticket);
    }

    /** Kernel launches so far (a counter for the engine's metrics and for tests). */
    public long launches() {
        return launches;
    }

    /** Registers per thread of the loaded kernel, as JIT-compiled for this GPU. */
    public int kernelRegisters() {
        return kernel.registers();
    }

    /** Blocks of the largest launch (a full, resident grid). */
    public int maxBlocks() {
        return kernel.maxBlocks();
    }

    /** The stream the batch being built (or the next one) goes to. */
    CUstream stream() {
        return streams[turn];
    }

    /** Work lists allocated so far. */
    int workLists() {
        return ring.size();
    }

    /** Waits for all submitted work, then frees the work lists, events, streams and kernel. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        contexts.makeCurrent(device);
        TransferException failure = null;
        for (CUstream stream : streams) {
            try {
                CudaCheck.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
            } catch (TransferException e) {
                failure = failure == null ? e : failure;
            }
        }
        events.close();
        for (Slot s : ring) {
            memory.free(s.host);
            if (s.device != null) {
                memory.free(s.device);
            }
        }
        ring.clear();
        destroyStreams();
        kernel.close();
        if (failure != null) {
            throw failure;
        }
    }

    /** The work list filled up in the middle of a batch: launch it and go on in the next one. */
    private WorkList flush(WorkList full) {
        launch(open);
        open = acquire();
        return open.list;
    }

    private void launch(Slot slot) {
        contexts.makeCurrent(device);
        int n = slot.list.size();
        if (slot.device != null) {
            // The three arrays sit at fixed offsets of a full-capacity table: copy the used parts.
            long cap = slot.list.capacity();
            upload(slot, 0, 8L * n);
            upload(slot, 8 * cap, 8L * n);
            upload(slot, 16 * cap, 4L * n);
        }
        slot.count[0] = n;
        slot.unit[0] = kernel.unitFor(n, slot.list.bytes());
        kernel.launch(kernel.gridFor((n + slot.unit[0] - 1) / slot.unit[0]), kernel.blockThreads(), streams[turn],
                slot.params);
        launches++;
        batch.add(slot);
    }

    private void upload(Slot slot, long offset, long bytes) {
        CudaCheck.check(cuMemcpyAsync(Addresses.device(slot.device.address() + offset),
                Addresses.device(slot.host.address() + offset), bytes, streams[turn]), "cuMemcpyAsync(work list)");
    }

    private void destroyStreams() {
        for (int i = 0; i < STREAMS; i++) {
            if (streams[i] != null) {
                cuStreamDestroy(streams[i]);
                streams[i] = null;
            }
        }
    }

    /** The least recently used work list if its launch finished, else a new one. */
    private Slot acquire() {
        if (!ring.isEmpty()) {
            Slot s = ring.get(cursor);
            if (s.ticket == 0 || (s.ticket != OPEN && events.isDone(s.ticket))) {
                cursor = (cursor + 1) % ring.size();
                s.list.clear();
                s.ticket = OPEN;
                return s;
            }
        }
        Slot s = newSlot();
        ring.add(cursor, s);
        cursor = (cursor + 1) % ring.size();
        s.ticket = OPEN;
        return s;
    }

    private Slot newSlot() {
        int capacity = settings.recordsPerLaunch();
        long bytes = WorkList.bytesFor(capacity);
        MemoryDescriptor host = memory.allocatePinned(bytes);
        MemoryDescriptor dev = null;
        if (settings.recordsInDeviceMemory()) {
            try {
                dev = memory.allocate(MemoryKind.VRAM, bytes, device);
            } catch (TransferException e) {
                memory.free(host);
                throw e;
            }
        }
        return new Slot(host, dev, capacity);
    }

    /** The GPU can reach host memory only through a pinned mapping; remember the last one checked. */
    private void requireMapped(long address, String what) {
        if (address == checkedHost) {
            return;
        }
        if (!memory.isDeviceMappedHost(address)) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED, "the " + what + " at 0x"
                    + Long.toHexString(address) + " is host memory the GPU cannot address; use pinned, mapped "
                    + "memory (DeviceMemory.allocatePinned)");
        }
        checkedHost = address;
    }

    private void requireOpen() {
        if (closed) {
            throw new TransferException(TransferException.Code.BACKEND, "unpacker is closed");
        }
    }

    private static UnpackKernel kernelFor(CudaDeviceMemory memory, int device, Settings settings) {
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(settings, "settings");
        return settings.ptx() == null ? UnpackKernel.shipped(memory.contexts(), device)
                : new UnpackKernel(memory.contexts(), device, read(settings.ptx()));
    }

    private static byte[] read(Path ptx) {
        try {
            return Files.readAllBytes(ptx);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
