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
     * What one engine runs on and the meters it records into ({@code metrics}: null for none); its warm-up
     * travels in its configuration.
     */
    record Spec(TransportKind transport, MemoryKind memory, String bindHost, CliMetrics metrics) {
        Spec {
            Objects.requireNonNull(transport, "transport");
            Objects.requireNonNull(memory, "memory");
            Objects.requireNonNull(bindHost, "bindHost");
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
        Objects.requireNonNull(transport, "transport");
        if (memory == MemoryKind.VRAM) {
            // loads JCuda's native library and calls cuInit; failures are reported, never fatal
            if (!Cuda.isAvailable()) {
                throw new Unavailable("--mem vram is not available on this host: CUDA is not usable ("
                        + Main.shortCause(Cuda.unavailabilityCause()) + "); use --mem dram, or run 'tcpx4j doctor --mem vram'");
            }
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
        checkAvailable(spec.transport(), spec.memory());
        Module module = switch (spec.transport()) {
            case LOOPBACK -> new LoopbackTransportModule(loopbackConfig(spec.bindHost()));
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
     * for {@code --mem vram}, cuda-unpack (CUDA device memory and the unpack kernel on GPU 0).
     */
    static Module compose(EngineConfig config, Spec spec) {
        Module transport = transportModule(spec, config.chunkSize());
        Module engine = new EngineModule(config);
        if (spec.memory() == MemoryKind.VRAM) {
            return Modules.combine(engine, transport, new CudaUnpackModule(0));
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
