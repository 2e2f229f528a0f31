package io.tcpx4j.cuda;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import jcuda.Pointer;
import jcuda.driver.CUmemorytype;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;

import static jcuda.driver.JCudaDriver.CU_MEMHOSTALLOC_DEVICEMAP;
import static jcuda.driver.JCudaDriver.CU_MEMHOSTALLOC_PORTABLE;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemGetAddressRange;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemcpyAsync;
import static jcuda.driver.JCudaDriver.cuPointerGetAttribute;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * {@link DeviceMemory} on the CUDA driver API (JCuda). Device memory comes from {@code cuMemAlloc}
 * (never managed memory), 4 KiB aligned as TCPX's dma-buf registration requires; host memory from
 * {@code cuMemHostAlloc(DEVICEMAP | PORTABLE)}: page-locked, visible to every GPU at its host address
 * (unified addressing). Copies run on one non-blocking stream per GPU; asynchronous ones return a
 * ticket backed by a pooled event. Each GPU's primary context is retained on first use and made
 * current on the calling thread by every method that needs it.
 *
 * <p>Everything allocated here is freed by {@link #close()}, which also releases the contexts. Close
 * the {@link CudaScatterGather}s made on this memory first.
 *
 * <p>Thread-safe.
 */
public final class CudaDeviceMemory implements DeviceMemory {

    private static final System.Logger LOG = System.getLogger(CudaDeviceMemory.class.getName());
    private static final long ALIGNMENT = NativeMemory.PAGE;

    private record Allocation(long raw, long size, MemoryKind kind, int device) {
    }

    private final Contexts contexts;
    private final ConcurrentHashMap<Long, Allocation> allocations = new ConcurrentHashMap<>();
    /**
     * One ring per GPU: an event must be recorded on a stream of its own context. A ticket carries
     * its ring in the low {@link #DEVICE_BITS} bits.
     */
    private final EventRing[] tickets;
    private final Object ticketLock = new Object();
    private static final int DEVICE_BITS = 6;
    /**
     * Per GPU, the highest ticket seen done on its copy stream. One stream runs a GPU's copies in
     * order, so every earlier ticket of that GPU is done too: {@link #isDone} answers those without
     * the lock, which the loopback transport's I/O threads (polling staging copies) and the agent
     * (starting them) otherwise contend for.
     */
    private final AtomicLongArray doneThrough;
    private volatile boolean closed;

    /**
     * Initialises CUDA (no context is created until a GPU is first used).
     *
     * @throws TransferException NOT_SUPPORTED when {@link Cuda#isAvailable()} is false
     */
    public CudaDeviceMemory() {
        this.contexts = new Contexts();
        if (contexts.deviceCount() > 1 << DEVICE_BITS) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED, contexts.deviceCount() + " GPUs: at most "
                    + (1 << DEVICE_BITS) + " are supported");
        }
        tickets = new EventRing[contexts.deviceCount()];
        doneThrough = new AtomicLongArray(contexts.deviceCount());
        for (int d = 0; d < tickets.length; d++) {
            tickets[d] = new EventRing();
        }
        LOG.log(System.Logger.Level.DEBUG, "CUDA driver {0}, {1} GPU(s)", Cuda.driverVersion(), contexts.deviceCount());
    }

    /** GPUs this memory can use. */
    public int deviceCount() {
        return contexts.deviceCount();
    }

    Contexts contexts() {
        return contexts;
    }

    @Override
    public boolean hasDevices() {
        return contexts.deviceCount() > 0;
    }

    @Override
    public MemoryKind kindOf(long address) {
        return deviceOf(address) >= 0 ? MemoryKind.VRAM : MemoryKind.DRAM;
    }

    /** The GPU ordinal owning device memory at {@code address}, or -1 for any host address. */
    int deviceOf(long address) {
        contexts.makeCurrent(0);
        int[] type = {0};
        int result = cuPointerGetAttribute(Pointer.to(type), CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                Addresses.device(address));
        if (result == CUresult.CUDA_ERROR_INVALID_VALUE) {
            return -1; // memory CUDA does not know: plain host memory
        }
        CudaCheck.check(result, "cuPointerGetAttribute(MEMORY_TYPE)");
        if (type[0] != CUmemorytype.CU_MEMORYTYPE_DEVICE) {
            return -1;
        }
        int[] ordinal = {0};
        CudaCheck.check(cuPointerGetAttribute(Pointer.to(ordinal), CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                Addresses.device(address)), "cuPointerGetAttribute(DEVICE_ORDINAL)");
        return ordinal[0];
    }

    /** Whether a GPU can address the host memory at {@code address} (pinned and mapped). */
    boolean isDeviceMappedHost(long address) {
        contexts.makeCurrent(0);
        long[] devicePointer = {0};
        int result = cuPointerGetAttribute(Pointer.to(devicePointer), CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                Addresses.device(address));
        return result == CUresult.CUDA_SUCCESS && devicePointer[0] == address;
    }

    @Override
    public MemoryDescriptor allocationRange(long address, long length) {
        int device = deviceOf(address);
        if (device < 0) {
            return MemoryDescriptor.dram(address, length);
        }
        contexts.makeCurrent(device);
        Addresses.DevicePointer base = new Addresses.DevicePointer();
        long[] size = {0};
        CudaCheck.check(cuMemGetAddressRange(base, size, Addresses.device(address)), "cuMemGetAddressRange");
        MemoryDescriptor range = MemoryDescriptor.vram(base.address(), size[0], device);
        if (!range.contains(address, length)) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "0x" + Long.toHexString(address) + "+" + length + " runs past its allocation " + range);
        }
        return range;
    }

    @Override
    public MemoryDescriptor allocate(MemoryKind kind, long size, int device) {
        if (size <= 0) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "allocation of " + size + " bytes");
        }
        if (kind == MemoryKind.DRAM) {
            return allocatePinned(size);
        }
        contexts.makeCurrent(device);
        long rounded = roundUp(size);
        Addresses.DevicePointer p = new Addresses.DevicePointer();
        CudaCheck.check(cuMemAlloc(p, rounded), "cuMemAlloc(" + rounded + ")");
        long raw = p.address();
        long aligned = raw;
        if ((raw & (ALIGNMENT - 1)) != 0) {
            // cuMemAlloc guarantees 256 B only; small allocations may share a page. Over-allocate
            // and align up so the range can be registered with TCPX.
            CudaCheck.check(cuMemFree(p), "cuMemFree");
            CudaCheck.check(cuMemAlloc(p, rounded + ALIGNMENT), "cuMemAlloc(" + (rounded + ALIGNMENT) + ")");
            raw = p.address();
            aligned = (raw + ALIGNMENT - 1) & -ALIGNMENT;
        }
        allocations.put(aligned, new Allocation(raw, size, MemoryKind.VRAM, device));
        return MemoryDescriptor.vram(aligned, size, device);
    }

    @Override
    public MemoryDescriptor allocatePinned(long size) {
        if (size <= 0) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "allocation of " + size + " bytes");
        }
        if (roundUp(size) > Integer.MAX_VALUE) {
            // JCuda wraps every cuMemHostAlloc result in a direct ByteBuffer, whose capacity is an int.
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "pinned buffers are limited to 2 GiB - 1 (JCuda); asked for " + size);
        }
        contexts.makeCurrent(0);
        Addresses.HostPointer p = new Addresses.HostPointer();
        // PORTABLE: pinned for every context, not just the current one; DEVICEMAP: kernels may read
        // and write it at its host address (loopback bounce pages, work lists).
        CudaCheck.check(cuMemHostAlloc(p, roundUp(size), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
                "cuMemHostAlloc(" + size + ")");
        long address = p.address();
        allocations.put(address, new Allocation(address, size, MemoryKind.DRAM, 0));
        return MemoryDescriptor.dram(address, size);
    }

    @Override
    public void free(MemoryDescriptor memory) {
        Allocation a = allocations.remove(memory.address());
        if (a == null) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, memory + " was not allocated here");
        }
        release(a);
    }

    private void release(Allocation a) {
        contexts.makeCurrent(a.device());
        if (a.kind() == MemoryKind.VRAM) {
            CudaCheck.check(cuMemFree(Addresses.device(a.raw())), "cuMemFree");
        } else {
            CudaCheck.check(cuMemFreeHost(Addresses.device(a.raw())), "cuMemFreeHost");
        }
    }

    @Override
    public void copy(MemoryDescriptor destination, MemoryDescriptor source) {
        checkLengths(destination, source);
        if (destination.kind() == MemoryKind.DRAM && source.kind() == MemoryKind.DRAM) {
            NativeMemory.copy(source.address(), destination.address(), source.length());
            return;
        }
        if (source.length() == 0) {
            return;
        }
        int device = copyDevice(destination, source);
        CUstream stream = contexts.stream(device);
        // cuMemcpy returns before a device-to-device copy finished; an async copy plus a stream
        // sync gives the "done on return" this method promises for every direction.
        CudaCheck.check(cuMemcpyAsync(Addresses.device(destination.address()), Addresses.device(source.address()),
                source.length(), stream), "cuMemcpyAsync");
        CudaCheck.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    }

    @Override
    public long copyAsync(MemoryDescriptor destination, MemoryDescriptor source) {
        checkLengths(destination, source);
        if (destination.kind() == MemoryKind.DRAM && source.kind() == MemoryKind.DRAM) {
            NativeMemory.copy(source.address(), destination.address(), source.length());
            synchronized (ticketLock) {
                return tickets[0].completed() << DEVICE_BITS;
            }
        }
        int device = copyDevice(destination, source);
        CUstream stream = contexts.stream(device);
        synchronized (ticketLock) {
            if (source.length() > 0) {
                CudaCheck.check(cuMemcpyAsync(Addresses.device(destination.address()), Addresses.device(source.address()),
                        source.length(), stream), "cuMemcpyAsync");
            }
            return tickets[device].record(stream) << DEVICE_BITS | device;
        }
    }

    @Override
    public boolean isDone(long ticket) {
        int device = (int) (ticket & ((1 << DEVICE_BITS) - 1));
        long seq = ticket >>> DEVICE_BITS;
        if (!closed && ticket > 0 && device < tickets.length && seq <= doneThrough.get(device)) {
            return true;
        }
        synchronized (ticketLock) {
            if (contexts.isClosed()) {
                throw new TransferException(TransferException.Code.BACKEND, "CUDA device memory is closed");
            }
            if (ticket == 0) {
                return true;
            }
            if (ticket < 0 || device >= tickets.length) {
                throw new TransferException(TransferException.Code.INVALID_PARAM, "unknown ticket " + ticket);
            }
            EventRing ring = tickets[device];
            // Only an event seen firing proves its predecessors done; a host-side ticket
            // (EventRing.completed) or one retired earlier says nothing about the stream.
            boolean recorded = ring.isPending(seq);
            boolean done = ring.isDone(seq);
            if (done && recorded && seq > doneThrough.get(device)) {
                doneThrough.set(device, seq);
            }
            return done;
        }
    }

    /** Frees every allocation still held, destroys events and streams, releases the contexts. Idempotent. */
    @Override
    public void close() {
        if (contexts.isClosed()) {
            return;
        }
        closed = true;
        List<TransferException> failures = new ArrayList<>();
        for (Long address : List.copyOf(allocations.keySet())) {
            Allocation a = allocations.remove(address);
            if (a != null) {
                try {
                    release(a);
                } catch (TransferException e) {
                    failures.add(e);
                }
            }
        }
        synchronized (ticketLock) {
            for (int d = 0; d < tickets.length; d++) {
                if (!tickets[d].holdsEvents()) {
                    continue;
                }
                try {
                    contexts.makeCurrent(d);
                    tickets[d].close();
                } catch (TransferException e) {
                    failures.add(e);
                }
            }
        }
        try {
            contexts.close();
        } catch (TransferException e) {
            failures.add(e);
        }
        if (!failures.isEmpty()) {
            TransferException first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }

    /** Allocations currently held (for leak checks in tests). */
    int liveAllocations() {
        return allocations.size();
    }

    private static void checkLengths(MemoryDescriptor destination, MemoryDescriptor source) {
        if (destination.length() != source.length()) {
            throw new TransferException(TransferException.Code.MISMATCH,
                    "copy of " + source.length() + " bytes into " + destination.length());
        }
    }

    /** The GPU whose stream runs a copy: the destination's if it is VRAM, else the source's. */
    private static int copyDevice(MemoryDescriptor destination, MemoryDescriptor source) {
        return destination.kind() == MemoryKind.VRAM ? destination.device() : source.device();
    }

    private static long roundUp(long size) {
        return (size + ALIGNMENT - 1) & -ALIGNMENT;
    }
}
