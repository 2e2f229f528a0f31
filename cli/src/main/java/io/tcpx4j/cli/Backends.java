package io.tcpx4j.cli;

import com.google.inject.AbstractModule;
import com.google.inject.Module;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.util.Modules;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.cuda.Cuda;
import io.tcpx4j.cuda.CudaUnpackModule;
import io.tcpx4j.api.EngineConfig;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.inject.EngineModule;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransport;
import io.tcpx4j.transport.loopback.LoopbackTransportModule;
import io.tcpx4j.transport.tcpx.TcpxOptions;
import io.tcpx4j.transport.tcpx.TcpxTransport;
import io.tcpx4j.transport.tcpx.TcpxTransportModule;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The one place where the CLI chooses adapters: which transport module (and, for GPU memory, the
 * cuda-unpack module) an engine's injector gets beside {@code EngineModule}, and whether the selected
 * memory is usable on this host (every adapter is part of the CLI build).
 * Adding a transport or the CUDA memory module touches only this class.
 *
 * <p>Thread-safe (stateless).
 */
final class Backends {

    private Backends() {
    }

    /**
     * This host's GPUs through the CUDA driver (JCuda): the count the driver reports, and cuda-unpack's
     * device memory with the unpack kernel on the GPU asked for. Nothing loads until first asked.
     */
    static final GpuHost CUDA = new GpuHost() {
        @Override
        public int count() {
            // loads JCuda's native library and calls cuInit; failures are reported, never fatal
            return Cuda.isAvailable() ? Cuda.deviceCount() : 0;
        }

        @Override
        public String unavailable() {
            return Cuda.isAvailable() ? null : Main.shortCause(Cuda.unavailabilityCause());
        }

        @Override
        public Module module(int device) {
            return new CudaUnpackModule(device);
        }
    };

    /**
     * What one engine runs on and the meters it records into ({@code metrics}: null for none); its warm-up
     * travels in its configuration. With GPU memory, {@code gpus} provides it and the engine's unpack
     * kernel runs on GPU {@code device} (the first of the GPUs its buffers are on). {@code ioThreads}: the
     * loopback transport's I/O threads.
     */
    record Spec(TransportKind transport, MemoryKind memory, String bindHost, CliMetrics metrics, GpuHost gpus,
                int device, int ioThreads) {
        Spec {
            Objects.requireNonNull(transport, "transport");
            Objects.requireNonNull(memory, "memory");
            Objects.requireNonNull(bindHost, "bindHost");
            Objects.requireNonNull(gpus, "gpus");
            if (device < 0) {
                throw new IllegalArgumentException("negative GPU ordinal " + device);
            }
        }

        /** An engine on this host's CUDA GPUs, unpacking on GPU 0, with the loopback transport's default threads. */
        Spec(TransportKind transport, MemoryKind memory, String bindHost, CliMetrics metrics) {
            this(transport, memory, bindHost, metrics, CUDA, 0, LoopbackConfig.defaults().ioThreads());
        }

        /** An engine without meters. */
        Spec(TransportKind transport, MemoryKind memory, String bindHost) {
            this(transport, memory, bindHost, null);
        }
    }

    /**
     * Fails with {@link Unavailable} if this host cannot run {@code transport} with {@code memory}.
     * No transport's native library is loaded here (a missing TCPX plugin shows when the engine
     * starts, {@link Node#start}).
     */
    static void checkAvailable(TransportKind transport, MemoryKind memory) {
        checkAvailable(transport, memory, CUDA);
    }

    /** As {@link #checkAvailable(TransportKind, MemoryKind)}, with GPU memory from {@code gpus}. */
    static void checkAvailable(TransportKind transport, MemoryKind memory, GpuHost gpus) {
        Objects.requireNonNull(transport, "transport");
        if (memory == MemoryKind.VRAM) {
            requireGpus(gpus);
        }
    }

    /** Fails with {@link Unavailable} unless GPU memory is usable on this host. */
    static void requireGpus(GpuHost gpus) {
        String why = gpus.unavailable();
        if (why != null) {
            throw new Unavailable("--mem vram is not available on this host: CUDA is not usable (" + why
                    + "); use --mem dram, or run 'tcpx4j doctor --mem vram'");
        }
    }

    /**
     * The transport module for one engine. Modules do no I/O: the TCPX plugin is loaded when the
     * injector first provisions the transport.
     */
    static Module transportModule(Spec spec) {
        return transportModule(spec, EngineConfig.DEFAULT_CHUNK);
    }

    /**
     * As {@link #transportModule(Spec)}, for an engine of {@code chunkSize}-byte chunks: over TCPX the
     * plugin's NCCL_DYNAMIC_CHUNK_SIZE (when the environment does not set it) is the same size, so one
     * engine chunk is one plugin scheduling unit.
     */
    static Module transportModule(Spec spec, int chunkSize) {
        checkAvailable(spec.transport(), spec.memory(), spec.gpus());
        Module module = switch (spec.transport()) {
            case LOOPBACK -> new LoopbackTransportModule(loopbackConfig(spec.bindHost()).withIoThreads(spec.ioThreads()));
            case TCPX -> new TcpxTransportModule(TcpxOptions.defaults().withDynamicChunkSize(chunkSize));
        };
        return spec.metrics() == null ? module : Modules.override(module).with(metered(spec.transport(), spec.metrics()));
    }

    /**
     * Binds {@code NetTransport} to the transport the module would bind, wrapped in the meters' decorator:
     * built as LoopbackTransportModule builds it, or the TcpxTransport that TcpxTransportModule provides.
     */
    private static Module metered(TransportKind kind, CliMetrics metrics) {
        return switch (kind) {
            case LOOPBACK -> new AbstractModule() {
                @Provides
                @Singleton
                NetTransport transport(LoopbackConfig config, Optional<DeviceMemory> deviceMemory) {
                    return metrics.transport(new LoopbackTransport(config, deviceMemory.orElse(null)));
                }
            };
            case TCPX -> new AbstractModule() {
                @Provides
                @Singleton
                NetTransport transport(TcpxTransport raw) {
                    return metrics.transport(raw);
                }
            };
        };
    }

    /**
     * The whole composition of one engine's injector: {@code EngineModule}, the transport module and,
     * for {@code --mem vram}, the GPUs' module (cuda-unpack: CUDA device memory on every GPU and the unpack
     * kernel on the spec's GPU).
     */
    static Module compose(EngineConfig config, Spec spec) {
        Module transport = transportModule(spec, config.chunkSize());
        Module engine = new EngineModule(config);
        if (spec.memory() == MemoryKind.VRAM) {
            return Modules.combine(engine, transport, spec.gpus().module(spec.device()));
        }
        return Modules.combine(engine, transport);
    }

    /**
     * Opens the TCPX plugin for inspection ({@code doctor}): init runs in a child JVM first (TCPX's
     * init calls exit(1) when the CUDA driver fails), then here; NCCL_DYNAMIC_CHUNK_SIZE is left alone
     * so that the doctor reports the environment as the user set it.
     */
    static TcpxTransport tcpxForInspection(DeviceMemory memory) {
        return TcpxTransport.open(TcpxOptions.defaults().withDynamicChunkSize(0).withProbeTimeout(Duration.ofSeconds(30)),
                memory);
    }

    /**
     * The loopback transport's settings here: host receives land in place as on TCPX (receives into GPU
     * memory always go through bounce pages).
     */
    static LoopbackConfig loopbackConfig(String bindHost) {
        return LoopbackConfig.defaults().withDevmem(false).withBindHost(bindHost);
    }
}
