package io.tcpx4j.api;

import io.tcpx4j.api.spi.EngineProvider;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;

/**
 * Builds and starts engines, no injector needed. The transport comes from a transport module
 * ({@code new LoopbackTransport(...)}, or TCPX's on A3 hosts), built by the application and handed over:
 *
 * <pre>{@code
 * try (TransferEngine engine = TransferEngines.create(EngineConfig.defaults("prefill-0"),
 *         new LoopbackTransport(LoopbackConfig.defaults()))) {
 *     ...
 * }
 * }</pre>
 *
 * <p>The engine returned owns what it was given: its {@code close()} stops the warm-up if one still runs,
 * fails transfers in flight with CANCELED, then closes the transport, the scatter-gather and the memory, in
 * that order. If the engine cannot be built or started, they are closed before the exception propagates.
 *
 * <p>The engine itself is found at run time through {@link java.util.ServiceLoader} (an {@link EngineProvider}
 * that tcpx4j-domain registers; every transport module depends on it), first through the calling thread's
 * context class loader, then through this class's. Without one, {@code create} fails with an
 * {@link IllegalStateException} that names the module to add.
 *
 * <p>Thread-safe (no state).
 */
public final class TransferEngines {

    static final String NO_PROVIDER = "no tcpx4j engine on the class path: found no "
            + EngineProvider.class.getName() + " through ServiceLoader. Add the module tcpx4j-domain (every "
            + "transport module, such as tcpx4j-transport-loopback, brings it); a shaded jar must keep its "
            + "META-INF/services entries";

    private TransferEngines() {
    }

    /** A started engine over {@code transport} that moves host memory (copies and gathers by the CPU). */
    public static TransferEngine create(EngineConfig config, Transport transport) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(transport, "transport");
        return provider(transport).create(config, transport);
    }

    /**
     * A started engine over {@code transport} whose memory services are the caller's, e.g. a GPU's from the
     * cuda-unpack module ({@code CudaDeviceMemory} and {@code CudaScatterGather}).
     */
    public static TransferEngine create(EngineConfig config, Transport transport, EngineMemory memory,
                                        EngineScatterGather scatterGather) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(scatterGather, "scatterGather");
        return provider(transport, scatterGather, memory).create(config, transport, memory, scatterGather);
    }

    /** The first provider found, or an exception after closing what the caller handed over. */
    private static EngineProvider provider(AutoCloseable... given) {
        RuntimeException failure;
        try {
            EngineProvider found = find();
            if (found != null) {
                return found;
            }
            failure = new IllegalStateException(NO_PROVIDER);
        } catch (ServiceConfigurationError e) {
            failure = new IllegalStateException("the tcpx4j engine on the class path cannot be loaded: "
                    + e.getMessage(), e);
        }
        for (AutoCloseable c : given) {
            try {
                c.close();
            } catch (Exception e) {
                failure.addSuppressed(e);
            }
        }
        throw failure;
    }

    private static EngineProvider find() {
        Set<ClassLoader> loaders = new LinkedHashSet<>();
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        if (context != null) {
            loaders.add(context);
        }
        loaders.add(TransferEngines.class.getClassLoader());
        for (ClassLoader loader : loaders) {
            Iterator<EngineProvider> providers = ServiceLoader.load(EngineProvider.class, loader).iterator();
            if (providers.hasNext()) {
                return providers.next();
            }
        }
        return null;
    }
}
