package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

import java.util.ArrayList;
import java.util.List;

import static jcuda.driver.JCudaDriver.cuMemcpyAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * The GPU side of a {@link CudaScatterGather}: it owns the work lists, the {@link CudaScatterGather#STREAMS}
 * streams consecutive batches take turns on, the events behind the tickets, and the kernel it
 * launches. The scatter-gather fills the batch's {@link #open() open} work list; a list that fills up is
 * {@link #flush launched} at once and replaced, and {@link #submit} launches the rest of the batch,
 * records its ticket on the batch's stream and turns to the next stream.
 *
 * <p>A work list lives in pinned host memory, which the kernel reads in place (with
 * {@link CudaScatterGather.Settings#recordsInDeviceMemory()}, from a device copy uploaded on the batch's
 * stream at launch). It is reused once the ticket of the batch that launched it is done; when the
 * least recently used one is still busy a new one is allocated, so filling and launching never wait
 * for the GPU.
 *
 * <p><b>Not thread-safe</b>: owned by one {@link CudaScatterGather} and driven by it.
 */
final class Launcher implements AutoCloseable {

    /** A work list and what launching it needs. */
    private static final class Slot {
        final MemoryDescriptor host;
        final MemoryDescriptor device; // null unless recordsInDeviceMemory
        final WorkList list;
        final int[] count = {0};
        final int[] unit = {1};
        final Pointer params;
        /**
         * The same parameter list in native memory for {@link DirectDriver}: four pointers, then the
         * values they point to (table u64 at 32, capacity at 40, count at 44, unit at 48).
         */
        final long nativeParams;
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
            this.nativeParams = nativeParameters(table, capacity);
        }

        /** Sets the launch's record count and unit in both parameter lists. */
        void deal(int records, int recordsPerUnit) {
            count[0] = records;
            unit[0] = recordsPerUnit;
            setDeal(nativeParams, records, recordsPerUnit);
        }
    }

    /**
     * The kernel's parameter list in native memory (free it with NativeMemory.free): four pointers,
     * then the values they point to, the work list's table and capacity, count 0 and unit 1.
     */
    static long nativeParameters(long table, int capacity) {
        long params = NativeMemory.allocate(NATIVE_PARAMS_BYTES, Long.BYTES);
        for (int i = 0; i < 4; i++) {
            NativeMemory.putLong(params + 8L * i, params + NATIVE_VALUES[i]);
        }
        NativeMemory.putLong(params + NATIVE_VALUES[0], table);
        NativeMemory.putInt(params + NATIVE_VALUES[1], capacity);
        setDeal(params, 0, 1);
        return params;
    }

    /** Sets the record count and unit of a list made by {@link #nativeParameters}. */
    static void setDeal(long params, int records, int recordsPerUnit) {
        NativeMemory.putInt(params + NATIVE_VALUES[2], records);
        NativeMemory.putInt(params + NATIVE_VALUES[3], recordsPerUnit);
    }

    private static final int NATIVE_PARAMS_BYTES = 56;
    /** Offsets of the four parameter values behind the pointer array of {@link Slot#nativeParams}. */
    private static final long[] NATIVE_VALUES = {32, 40, 44, 48};

    private static final long OPEN = -1;

    private final CudaDeviceMemory memory;
    private final Contexts contexts;
    private final int device;
    private final CudaScatterGather.Settings settings;
    private final UnpackKernel kernel;
    private final CUstream[] streams = new CUstream[CudaScatterGather.STREAMS];
    /** The stream of the batch being built; the next one takes the next stream. */
    private int turn;
    private final EventRing events = new EventRing();
    private final List<Slot> ring = new ArrayList<>();
    private final List<Slot> batch = new ArrayList<>();
    private int cursor;
    private Slot open;
    private long launches;

    /**
     * Creates the streams in {@code device}'s context; the launcher then owns {@code kernel} (loaded
     * into that context), and closes it at once if a stream cannot be created.
     */
    Launcher(CudaDeviceMemory memory, int device, CudaScatterGather.Settings settings, UnpackKernel kernel) {
        this.memory = memory;
        this.contexts = memory.contexts();
        this.device = device;
        this.settings = settings;
        this.kernel = kernel;
        try {
            contexts.makeCurrent(device);
            for (int i = 0; i < CudaScatterGather.STREAMS; i++) {
                CUstream stream = new DirectDriver.Stream();
                CudaCheck.check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
                streams[i] = stream;
            }
        } catch (TransferException e) {
            destroyStreams();
            kernel.close();
            throw e;
        }
    }

    /** The work list of the batch being built, taken by {@link #acquire} if the batch has none yet. */
    WorkList open() {
        if (open == null) {
            open = acquire();
        }
        return open.list;
    }

    /** The open work list filled up in the middle of a batch: launch it and go on in the next one. */
    WorkList flush(WorkList full) {
        launch(open);
        open = acquire();
        return open.list;
    }

    /**
     * Ends the batch: launches its open work list unless that is empty, then, if the batch launched
     * anything, records the ticket that covers it on its stream and turns to the next stream.
     * Returns that ticket; for a batch with nothing launched, a ticket already done if
     * {@code hostWork} (the CPU did it), else 0.
     */
    long submit(boolean hostWork) {
        if (open != null && open.list.size() > 0) {
            launch(open);
            open = null;
        }
        long ticket;
        if (!batch.isEmpty()) {
            contexts.makeCurrent(device);
            ticket = events.record(streams[turn]);
            turn = (turn + 1) % CudaScatterGather.STREAMS;
            for (Slot s : batch) {
                s.ticket = ticket;
            }
            batch.clear();
        } else if (hostWork) {
            ticket = events.completed();
        } else {
            ticket = 0;
        }
        return ticket;
    }

    /** Whether the work behind {@code ticket} finished ({@link EventRing#isDone}). */
    boolean isDone(long ticket) {
        return events.isDone(ticket);
    }

    /** Kernel launches so far. */
    long launches() {
        return launches;
    }

    /** The stream the batch being built (or the next one) goes to. */
    CUstream stream() {
        return streams[turn];
    }

    /** Work lists allocated so far. */
    int workLists() {
        return ring.size();
    }

    /**
     * Waits for all submitted work, then destroys the events, frees the work lists, destroys the
     * streams and closes the kernel, going on past a failed wait and throwing the first one at the end.
     * Called once, by {@link CudaScatterGather#close()}.
     */
    @Override
    public void close() {
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
            NativeMemory.free(s.nativeParams);
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
        slot.deal(n, kernel.unitFor(n, slot.list.bytes()));
        kernel.launch(kernel.gridFor((n + slot.unit[0] - 1) / slot.unit[0]), kernel.blockThreads(), streams[turn],
                slot.params, slot.nativeParams);
        launches++;
        batch.add(slot);
    }

    private void upload(Slot slot, long offset, long bytes) {
        CudaCheck.check(cuMemcpyAsync(Addresses.device(slot.device.address() + offset),
                Addresses.device(slot.host.address() + offset), bytes, streams[turn]), "cuMemcpyAsync(work list)");
    }

    private void destroyStreams() {
        for (int i = 0; i < CudaScatterGather.STREAMS; i++) {
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
}
