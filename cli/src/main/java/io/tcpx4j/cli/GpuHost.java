package io.tcpx4j.cli;

import com.google.inject.Module;

/**
 * The GPUs of this host as the CLI uses them: how many there are, and the adapters that put an engine's
 * device memory on them. {@link Backends#CUDA} asks the CUDA driver; tests substitute a double.
 *
 * <p>Implementations are thread-safe.
 */
interface GpuHost {

    /** The GPUs the driver reports; 0 where GPU memory is not usable ({@link #unavailable()} says why). */
    int count();

    /** Why GPU memory is not usable here, one line, or null when it is. */
    String unavailable();

    /**
     * The module an engine with GPU memory gets beside {@code EngineModule} and its transport module: device
     * memory on every GPU, and the scatter-gather (the unpack kernel) on GPU {@code device}.
     */
    Module module(int device);
}
