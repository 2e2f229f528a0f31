package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.memory.CpuUnpacker;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.Unpacker;

import java.util.Objects;

/**
 * The one place where the CLI chooses and builds adapters: the transport, device memory and the
 * unpacker for one engine. Everything else gets them from here, so adding a transport or the CUDA
 * memory module touches only this class.
 *
 * <p>Thread-safe (stateless).
 */
final class Backends {

    private Backends() {
    }

    /** What one engine runs on. */
    record Spec(TransportKind transport, MemoryKind memory, String bindHost) {
        Spec {
            Objects.requireNonNull(transport, "transport");
            Objects.requireNonNull(memory, "memory");
            Objects.requireNonNull(bindHost, "bindHost");
        }
    }

    /** The adapters of one engine. The caller closes the transport after the engine. */
    record Parts(NetTransport transport, DeviceMemory memory, Unpacker unpacker) {
    }

    /**
     * Fails with {@link Unavailable} if this build cannot run {@code transport} with {@code memory}.
     * Cheap and side-effect free: no native library is loaded here.
     */
    static void checkAvailable(TransportKind transport, MemoryKind memory) {
        if (transport == TransportKind.TCPX) {
            throw new Unavailable("--transport tcpx is not available in this build (module transport-tcpx is not"
                    + " built in yet); use --transport loopback");
        }
        if (memory == MemoryKind.VRAM) {
            throw new Unavailable("--mem vram is not available in this build (module cuda-unpack is not built in"
                    + " yet); use --mem dram");
        }
        if (transport == TransportKind.LOOPBACK && !loopbackBuilt()) {
            throw new Unavailable("--transport loopback is not available in this build (module"
                    + " transport-loopback is not built in yet)");
        }
    }

    /** Builds the adapters for one engine. */
    static Parts create(Spec spec) {
        checkAvailable(spec.transport(), spec.memory());
        DeviceMemory memory = new HostMemory();
        return new Parts(loopback(spec.bindHost()), memory, new CpuUnpacker());
    }

    private static boolean loopbackBuilt() {
        return built(TransportKind.LOOPBACK);
    }

    /**
     * Whether the module of a transport (or, for null, cuda-unpack) is on the classpath. Looks the
     * class up without initialising it, so no native library is touched.
     */
    static boolean built(TransportKind transport) {
        String probe = transport == null ? "io.tcpx4j.cuda.Cuda"
                : transport == TransportKind.TCPX ? "io.tcpx4j.transport.tcpx.Tcpx"
                : "io.tcpx4j.transport.loopback.LoopbackTransport";
        try {
            Class.forName(probe, false, Backends.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private static NetTransport loopback(String bindHost) {
        throw new Unavailable("--transport loopback is not available in this build");
    }
}
