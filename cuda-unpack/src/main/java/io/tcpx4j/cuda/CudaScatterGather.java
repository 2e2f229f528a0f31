package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.FragmentReader;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.ScatterGather;
import jcuda.driver.CUstream;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * {@link ScatterGather} that scatters fragments with the tcpx4j unpack kernel on one GPU: every receive
 * {@link #add added} between two {@link #submit()}s goes out as one kernel launch (more only when
 * the batch outgrows {@link Settings#recordsPerLaunch()}), followed by one event whose ticket
 * {@link #isDone} polls. Consecutive batches take turns on {@link #STREAMS} streams: they are
 * independent (other receives, other bounce pages), so a batch may start while the one before it
 * finishes its last blocks, and each ticket covers its own batch only (tickets may complete out of
 * order).
 *
 * <p>Per receive, the CPU checks the fragment table ({@link FragmentReader}, as the CPU scatter-gather
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
public final class CudaScatterGather implements ScatterGather {

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
     *                              in-place list costs back-to-back launches only the PCIe round trips
     *                              where a launch starts and ends, and it spares a launch after host work
     *                              the upload's latency (docs/PERFORMANCE.md, "cuda-unpack")
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

    private final CudaDeviceMemory memory;
    private final int device;
    private final Settings settings;
    private final UnpackKernel kernel;
    /**
     * Streams consecutive batches take turns on. Two let a launch overlap the previous one's ramp
     * down: +1.5 to +3 points back to back at 4 KiB (docs/PERFORMANCE.md, "cuda-unpack").
     */
    static final int STREAMS = 2;

    /** Where queued work goes to the GPU: the work lists, streams, tickets and kernel. */
    private final Launcher launcher;
    private final WorkList.Overflow overflow;
    private final FragmentReader reader = new FragmentReader();
    private boolean cpuWork;
    /**
     * Host addresses found mapped lately, most recent first. An engine's receives alternate between the
     * bounce pools of its channels, so remembering one would ask the driver on nearly every add.
     */
    private final long[] checkedHost = new long[CHECKED_HOSTS];
    private int checkedHosts;
    private static final int CHECKED_HOSTS = 8;
    private boolean closed;

    /** A scatter-gather on GPU {@code device} with {@link Settings#DEFAULT}. */
    public CudaScatterGather(CudaDeviceMemory memory, int device) {
        this(memory, device, Settings.DEFAULT);
    }

    public CudaScatterGather(CudaDeviceMemory memory, int device, Settings settings) {
        this(memory, device, settings, kernelFor(memory, device, settings));
    }

    /** A scatter-gather that launches {@code kernel} (loaded into {@code device}'s context); it closes it. */
    CudaScatterGather(CudaDeviceMemory memory, int device, Settings settings, UnpackKernel kernel) {
        this.memory = Objects.requireNonNull(memory, "memory");
        this.device = device;
        this.settings = Objects.requireNonNull(settings, "settings");
        this.kernel = Objects.requireNonNull(kernel, "kernel");
        this.launcher = new Launcher(memory, device, settings, kernel);
        this.overflow = launcher::flush;
    }

    /** Another scatter-gather on the same GPU with the same settings and a kernel of its own. */
    @Override
    public ScatterGather another() {
        requireOpen();
        return new CudaScatterGather(memory, device, settings);
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
        WorkList open = launcher.open();
        if (open.appendIfFits(reader)) {
            return;
        }
        WorkList.validate(reader);
        keepAppending(open.append(reader, overflow));
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
        keepAppending(launcher.open().appendCopy(source, destination, length, overflow));
    }

    /** {@code last}, the list an append ended in, must be the open one (a full list was flushed and replaced). */
    private void keepAppending(WorkList last) {
        if (last != launcher.open()) {
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
        long ticket = launcher.submit(cpuWork);
        cpuWork = false;
        return ticket;
    }

    @Override
    public boolean isDone(long ticket) {
        requireOpen();
        return launcher.isDone(ticket);
    }

    /** Kernel launches so far (a counter for the engine's metrics and for tests). */
    public long launches() {
        return launcher.launches();
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
        return launcher.stream();
    }

    /** Work lists allocated so far. */
    int workLists() {
        return launcher.workLists();
    }

    /** Waits for all submitted work, then frees the work lists, events, streams and kernel. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        launcher.close();
    }

    /** The GPU can reach host memory only through a pinned mapping; remembers the last ones checked. */
    private void requireMapped(long address, String what) {
        for (int i = 0; i < checkedHosts; i++) {
            if (checkedHost[i] == address) {
                return;
            }
        }
        if (!memory.isDeviceMappedHost(address)) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED, "the " + what + " at 0x"
                    + Long.toHexString(address) + " is host memory the GPU cannot address; use pinned, mapped "
                    + "memory (DeviceMemory.allocatePinned)");
        }
        System.arraycopy(checkedHost, 0, checkedHost, 1, CHECKED_HOSTS - 1);
        checkedHost[0] = address;
        checkedHosts = Math.min(checkedHosts + 1, CHECKED_HOSTS);
    }

    private void requireOpen() {
        if (closed) {
            throw new TransferException(TransferException.Code.BACKEND, "scatter-gather is closed");
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
