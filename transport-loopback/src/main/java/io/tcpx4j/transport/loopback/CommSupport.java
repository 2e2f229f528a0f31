package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.domain.memory.NativeMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;

/**
 * What one transport lends the comms, listeners and connects it creates: its settings, its device
 * memory (staging of CUDA sources), and host memory for bounce pages and fragment tables. The comms hold it instead of their transport, so that the arrows go one way: the transport
 * knows its comms, they know only this. Two comms of one transport share one instance, which is how
 * the transport recognises its own comms.
 *
 * <p>Thread-safe: it holds final references to thread-safe parts.
 */
final class CommSupport {

    private final LoopbackConfig config;
    private final DeviceMemory deviceMemory;
    private final boolean gpu;

    /**
     * @param deviceMemory device memory services, or {@code null}
     * @param gpu          whether {@code deviceMemory} has devices (bounce pages are then pinned)
     */
    CommSupport(LoopbackConfig config, DeviceMemory deviceMemory, boolean gpu) {
        this.config = config;
        this.deviceMemory = deviceMemory;
        this.gpu = gpu;
    }

    LoopbackConfig config() {
        return config;
    }

    /** The transport's device memory; only asked for on GPU hosts, where it is never null. */
    DeviceMemory deviceMemory() {
        return deviceMemory;
    }

    /** Bounce pages and fragment tables: pinned and GPU-mapped on GPU hosts, plain native memory otherwise. */
    MemoryDescriptor allocateHost(long size) {
        if (gpu) {
            return deviceMemory.allocatePinned(size);
        }
        return MemoryDescriptor.dram(NativeMemory.allocate(size, NativeMemory.PAGE), size);
    }

    void freeHost(MemoryDescriptor memory) {
        if (gpu) {
            deviceMemory.free(memory);
        } else {
            NativeMemory.free(memory.address());
        }
    }
}
