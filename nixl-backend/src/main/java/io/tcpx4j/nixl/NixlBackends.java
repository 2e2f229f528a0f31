package io.tcpx4j.nixl;

import com.google.inject.ConfigurationException;
import com.google.inject.CreationException;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Module;
import com.google.inject.ProvisionException;
import com.google.inject.Stage;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.inject.EngineLifecycle;
import io.tcpx4j.inject.EngineModule;
import io.tcpx4j.transport.loopback.LoopbackConfig;
import io.tcpx4j.transport.loopback.LoopbackTransportModule;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The composition root of the NIXL backend: one Guice injector per backend, made of the engine
 * module, the transport module that the configuration names and, on a machine with an NVIDIA GPU,
 * the CUDA unpack module.
 *
 * <p>{@code transport=loopback} is built here, with {@code io_threads} (this module depends on the
 * loopback transport). The other adapter modules are loaded by class name, so that this module needs
 * neither JNA nor JCuda at build time and a missing adapter jar fails with a message that names it:
 * <ul>
 *   <li>{@code transport=tcpx}: {@value #TCPX_MODULE}</li>
 *   <li>{@code transport=<class name>}: that module (public, with a public no-argument constructor)</li>
 *   <li>{@code cuda=on}, or {@code auto} with {@code /dev/nvidiactl} present and the class on the class
 *       path: {@value #CUDA_MODULE}</li>
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class NixlBackends {

    static final String TCPX_MODULE = "io.tcpx4j.transport.tcpx.TcpxTransportModule";
    static final String CUDA_MODULE = "io.tcpx4j.cuda.CudaUnpackModule";

    private static final System.Logger LOG = System.getLogger(NixlBackends.class.getName());

    private NixlBackends() {
    }

    /**
     * Creates and starts a backend for agent {@code agent} from NIXL backend parameters (see
     * {@link NixlBackendConfig}). Binds the engine's control listener; may block briefly for that.
     *
     * @throws TransferException INVALID_PARAM for bad parameters, NOT_SUPPORTED for a transport or
     *                           CUDA module that is not on the class path, BACKEND if starting failed
     */
    public static NixlBackend create(String agent, Map<String, String> params) {
        NixlBackendConfig config = NixlBackendConfig.parse(agent, params);
        List<Module> modules = new ArrayList<>();
        modules.add(new EngineModule(config.engine()));
        modules.add(config.transport().equals("loopback")
                ? new LoopbackTransportModule(LoopbackConfig.defaults().withDevmem(false).withIoThreads(config.ioThreads()))
                : load(moduleClass(config.transport()), "transport '" + config.transport() + "' (from "
                        + config.source("transport") + ")"));
        Module cuda = cudaModule(config.cuda(), config.source("cuda"), gpuPresent());
        if (cuda != null) {
            modules.add(cuda);
        }
        EngineLifecycle lifecycle;
        try {
            Injector injector = Guice.createInjector(Stage.PRODUCTION, modules);
            lifecycle = injector.getInstance(EngineLifecycle.class);
        } catch (CreationException | ConfigurationException | ProvisionException e) {
            throw new TransferException(Code.BACKEND, "cannot assemble the TCPX backend of " + agent + ": "
                    + e.getMessage(), e);
        }
        try {
            TransferEngine engine = lifecycle.start();
            LOG.log(System.Logger.Level.INFO, "NIXL TCPX backend " + agent + " started: transport "
                    + config.transport() + " (from " + config.source("transport") + ")"
                    + (config.transport().equals("loopback") ? " with " + config.ioThreads() + " I/O threads (from "
                    + config.source("io_threads") + ")" : "") + ", CUDA unpack "
                    + (cuda != null ? "on" : "off") + " (cuda=" + config.cuda() + " from " + config.source("cuda")
                    + "), control listener " + config.engine().listenHost()
                    + (config.engine().agents() > 1 ? ", " + config.engine().agents() + " progress agents (from "
                    + config.source("agents") + ")" : "")
                    + (config.inlineProgress() ? ", progress inline (from " + config.source("progress") + ")"
                    : ", polls wait up to " + config.pollWait().toNanos() / 1000 + " µs on contended CPUs (from "
                    + config.source("poll_wait") + "), agents spin " + config.engine().progress().spin().toNanos() / 1000
                    + " µs before they block (from " + config.source("spin") + ")"));
            return new NixlBackend(engine, lifecycle, config.cost(), config.inlineProgress(), config.pollWait());
        } catch (RuntimeException e) {
            lifecycle.stop();
            throw e instanceof TransferException te ? te
                    : new TransferException(Code.BACKEND, "cannot start the TCPX backend of " + agent + ": " + e, e);
        }
    }

    /**
     * The CUDA unpack module for {@code cuda}, or null for none: {@code on} requires it, {@code off}
     * never loads it, {@code auto} loads it when a GPU is present and its jar is on the class path
     * (without the jar the backend moves host memory only and VRAM registrations fail with
     * NOT_SUPPORTED).
     */
    static Module cudaModule(String cuda, String source, boolean gpuPresent) {
        return switch (cuda) {
            case "on" -> load(CUDA_MODULE, "cuda=on (from " + source + ")");
            case "off" -> null;
            default -> {
                if (!gpuPresent) {
                    yield null;
                }
                if (!onClassPath(CUDA_MODULE)) {
                    LOG.log(System.Logger.Level.WARNING, "an NVIDIA GPU is present but " + CUDA_MODULE
                            + " is not on the class path: the TCPX backend moves host memory only (add"
                            + " tcpx4j-cuda-unpack and JCuda to the class path for VRAM, or set TCPX4J_NIXL_CUDA=off)");
                    yield null;
                }
                yield load(CUDA_MODULE, "cuda=auto (from " + source + ")");
            }
        };
    }

    /** The NVIDIA driver's control node exists exactly when a driver with a GPU is loaded. */
    static boolean gpuPresent() {
        return Files.exists(Path.of("/dev/nvidiactl"));
    }

    static boolean onClassPath(String className) {
        return NixlBackends.class.getClassLoader().getResource(className.replace('.', '/') + ".class") != null;
    }

    static String moduleClass(String transport) {
        return switch (transport) {
            case "tcpx" -> TCPX_MODULE;
            default -> transport;
        };
    }

    static Module load(String className, String why) {
        Class<?> type;
        try {
            type = Class.forName(className, true, NixlBackends.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new TransferException(Code.NOT_SUPPORTED, why + " needs " + className
                    + ", which is not on the class path: add its jar (and its dependencies) to the class path"
                    + " (tcpx4j-classpath.txt beside the bridge, or TCPX4J_CLASSPATH)", e);
        }
        if (!Module.class.isAssignableFrom(type)) {
            throw new TransferException(Code.INVALID_PARAM, className + " (for " + why + ") is not a Guice module");
        }
        try {
            return (Module) type.getConstructor().newInstance();
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            Throwable cause = e instanceof java.lang.reflect.InvocationTargetException ite ? ite.getCause() : e;
            throw new TransferException(Code.NOT_SUPPORTED, "cannot instantiate " + className + " (for " + why
                    + ") with its public no-argument constructor: " + cause, cause);
        }
    }
}
