import io.tcpx4j.api.HostBuffer;
import io.tcpx4j.api.Notification;
import io.tcpx4j.api.RegisteredMemory;
import io.tcpx4j.api.Session;
import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferEngine;
import io.tcpx4j.api.TransferStatus;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The program WritePath traces: two engines in one JVM over the loopback transport (kernel TCP on
 * 127.0.0.1), {@code warm} untraced WRITEs of {@code size} bytes with a notification, then {@code samples}
 * WRITEs each announced by {@link #traceNext} and closed by {@link #traced}, the two methods WritePath sets
 * breakpoints on. Every WRITE is checked: DONE, the bytes landed, one notification arrived.
 *
 * <p>It compiles against the api of any revision that has {@code io.tcpx4j.api.TransferEngine}; how an
 * engine is built differs between revisions and is done by reflection: {@code TransferEngines.create} where
 * the api module (or, earlier, the inject module) has it, else Guice's {@code EngineModule} and {@code EngineLifecycle} with the domain's
 * {@code EngineConfig}. Each engine is built on a thread of its own thread group, named after the engine,
 * so the threads it starts (its agent, its transport's I/O loops) carry that group and WritePath can tell
 * the engines apart.
 *
 * <p>Usage: {@code java -cp CLASSPATH WriteDriver.java WARM SAMPLES SIZE INLINE_LIMIT CALLER_DRIVES}
 * (INLINE_LIMIT -1: the revision's default; CALLER_DRIVES: the loopback transport's {@code callerDrives}
 * where the revision has it).
 */
public final class WriteDriver {

    private WriteDriver() {
    }

    public static void main(String[] args) throws Exception {
        int warm = Integer.parseInt(args[0]);
        int samples = Integer.parseInt(args[1]);
        int size = Integer.parseInt(args[2]);
        int inlineLimit = Integer.parseInt(args[3]);
        boolean callerDrives = Boolean.parseBoolean(args[4]);

        Engines initiator = Engines.start("initiator", inlineLimit, callerDrives);
        Engines target = Engines.start("target", inlineLimit, callerDrives);
        try (HostBuffer source = HostBuffer.allocate(size);
             HostBuffer destination = HostBuffer.allocate(size);
             RegisteredMemory sourceReg = initiator.engine.register(source.descriptor());
             RegisteredMemory destinationReg = target.engine.register(destination.descriptor())) {
            initiator.engine.loadPeer("target", target.engine.connInfo());
            initiator.engine.loadRemoteMetadata("target", destinationReg.publicMetadata());
            for (int i = 0; i < warm; i++) {
                write(initiator.engine, target.engine, source, destination, size, i, false);
            }
            for (int i = 0; i < samples; i++) {
                // let the agents finish the previous WRITE and go idle, so the window starts from quiet engines
                Thread.sleep(50);
                write(initiator.engine, target.engine, source, destination, size, warm + i, true);
            }
        } finally {
            initiator.close();
            target.close();
        }
        System.out.println("WriteDriver: " + warm + " warm and " + samples + " traced WRITEs of " + size
                + " bytes, all DONE");
    }

    private static void write(TransferEngine initiator, TransferEngine target, HostBuffer source,
                              HostBuffer destination, int size, int round, boolean traced) throws InterruptedException {
        byte[] payload = new byte[size];
        for (int i = 0; i < size; i++) {
            payload[i] = (byte) (round * 31 + i);
        }
        source.put(0, payload);
        byte[] note = ("write-" + round).getBytes(StandardCharsets.UTF_8);
        Session session = initiator.session("target");
        if (traced) {
            traceNext(round);
        }
        Transfer t = session.write(List.of(source.descriptor().slice(0, size)),
                List.of(destination.descriptor().slice(0, size)), note);
        TransferStatus status = t.await(Duration.ofSeconds(120));
        if (traced) {
            traced(round, status.name());
        }
        if (status != TransferStatus.DONE) {
            throw new IllegalStateException("WRITE " + round + " ended " + status + " " + t.error());
        }
        List<Notification> notes = target.drainNotifications();
        for (long end = System.nanoTime() + 60_000_000_000L; notes.isEmpty() && System.nanoTime() < end; ) {
            Thread.sleep(1);
            notes = target.drainNotifications();
        }
        byte[] landed = new byte[size];
        destination.get(0, landed);
        if (notes.size() != 1 || !new String(notes.get(0).message(), StandardCharsets.UTF_8).equals("write-" + round)
                || !java.util.Arrays.equals(landed, payload)) {
            throw new IllegalStateException("WRITE " + round + ": notifications " + notes + ", bytes differ: "
                    + !java.util.Arrays.equals(landed, payload));
        }
    }

    /** WritePath's breakpoint: the next {@code Session.write} on this thread opens a traced window. */
    static void traceNext(int round) {
    }

    /** WritePath's breakpoint: the traced WRITE's {@code await} returned {@code status}. */
    static void traced(int round, String status) {
    }

    /** One engine and how to close it, built by whichever factory the revision has. */
    private static final class Engines {
        final TransferEngine engine;
        private final AutoCloseable owner;

        private Engines(TransferEngine engine, AutoCloseable owner) {
            this.engine = engine;
            this.owner = owner;
        }

        static Engines start(String name, int inlineLimit, boolean callerDrives) throws Exception {
            AtomicReference<Object> built = new AtomicReference<>();
            Thread t = new Thread(new ThreadGroup(name), () -> {
                try {
                    built.set(build(name, inlineLimit, callerDrives));
                } catch (Exception e) {
                    built.set(e);
                }
            }, "build-" + name);
            t.start();
            t.join();
            if (built.get() instanceof Exception e) {
                throw e;
            }
            return (Engines) built.get();
        }

        private static Engines build(String name, int inlineLimit, boolean callerDrives) throws Exception {
            Object loopback = callStatic(Class.forName("io.tcpx4j.transport.loopback.LoopbackConfig"), "defaults");
            loopback = call(loopback, "withDevmem", false);
            if (has(loopback.getClass(), "withCallerDrives")) {
                loopback = call(loopback, "withCallerDrives", callerDrives);
            }
            // the plain factory: in api (transport typed as api's Transport), earlier in inject (NetTransport)
            String factory = exists("io.tcpx4j.api.TransferEngines") ? "io.tcpx4j.api.TransferEngines"
                    : exists("io.tcpx4j.inject.TransferEngines") ? "io.tcpx4j.inject.TransferEngines" : null;
            if (factory != null) {
                Object config = configure(Class.forName("io.tcpx4j.api.EngineConfig"), name, inlineLimit);
                Class<?> transportType = Class.forName("io.tcpx4j.transport.loopback.LoopbackTransport");
                Object transport = transportType.getConstructor(loopback.getClass()).newInstance(loopback);
                Method create = Class.forName(factory).getMethod("create", config.getClass(),
                        Class.forName(factory.startsWith("io.tcpx4j.api.") ? "io.tcpx4j.api.Transport"
                                : "io.tcpx4j.domain.port.out.NetTransport"));
                TransferEngine engine = (TransferEngine) create.invoke(null, config, transport);
                return new Engines(engine, engine);
            }
            Object config = configure(Class.forName("io.tcpx4j.domain.EngineConfig"), name, inlineLimit);
            Class<?> moduleType = Class.forName("com.google.inject.Module");
            Object modules = Array.newInstance(moduleType, 2);
            Array.set(modules, 0, Class.forName("io.tcpx4j.inject.EngineModule").getConstructor(config.getClass())
                    .newInstance(config));
            Array.set(modules, 1, Class.forName("io.tcpx4j.transport.loopback.LoopbackTransportModule")
                    .getConstructor(loopback.getClass()).newInstance(loopback));
            Object injector = Class.forName("com.google.inject.Guice").getMethod("createInjector", modules.getClass())
                    .invoke(null, modules);
            Class<?> lifecycleType = Class.forName("io.tcpx4j.inject.EngineLifecycle");
            Object lifecycle = Class.forName("com.google.inject.Injector").getMethod("getInstance", Class.class)
                    .invoke(injector, lifecycleType);
            TransferEngine engine = (TransferEngine) lifecycleType.getMethod("start").invoke(lifecycle);
            return new Engines(engine, (AutoCloseable) lifecycle);
        }

        /** The revision's defaults for {@code name}; the inline limit if given; no start-up warm-up. */
        private static Object configure(Class<?> configType, String name, int inlineLimit) throws Exception {
            Object config = callStatic(configType, "defaults", name);
            if (inlineLimit >= 0) {
                config = call(config, "withInlineLimit", inlineLimit);
            }
            if (has(configType, "withWarmUp")) {
                config = call(config, "withWarmUp", 0);
            }
            return config;
        }

        void close() throws Exception {
            owner.close();
        }

        private static boolean exists(String className) {
            try {
                Class.forName(className);
                return true;
            } catch (ClassNotFoundException e) {
                return false;
            }
        }

        private static boolean has(Class<?> type, String method) {
            for (Method m : type.getMethods()) {
                if (m.getName().equals(method)) {
                    return true;
                }
            }
            return false;
        }

        private static Object call(Object target, String method, Object... args) throws Exception {
            return invoke(target.getClass(), target, method, args);
        }

        private static Object callStatic(Class<?> type, String method, Object... args) throws Exception {
            return invoke(type, null, method, args);
        }

        /** Calls the public method {@code method} of {@code type} whose parameter count matches. */
        private static Object invoke(Class<?> type, Object target, String method, Object... args) throws Exception {
            for (Method m : type.getMethods()) {
                if (m.getName().equals(method) && m.getParameterCount() == args.length) {
                    return m.invoke(target, args);
                }
            }
            throw new NoSuchMethodException(type.getName() + "." + method + " with " + args.length + " arguments");
        }
    }
}
