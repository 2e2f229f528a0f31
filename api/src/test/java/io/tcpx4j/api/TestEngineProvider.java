package io.tcpx4j.api;

import io.tcpx4j.api.spi.EngineProvider;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Test double of the engine's provider: notes what it was asked to build and returns an engine that supports
 * nothing but identity. Registered only through the service files that {@link TransferEnginesTest} writes.
 */
public final class TestEngineProvider implements EngineProvider {

    /** What every instance was asked for: the configuration's name, then the arguments. */
    static final List<List<Object>> CALLS = new CopyOnWriteArrayList<>();
    /** The engines handed out, in order. */
    static final List<TransferEngine> MADE = new CopyOnWriteArrayList<>();

    @Override
    public TransferEngine create(EngineConfig config, Transport transport) {
        CALLS.add(List.of(config.name(), transport));
        return engine();
    }

    @Override
    public TransferEngine create(EngineConfig config, Transport transport, EngineMemory memory,
                                 EngineScatterGather scatterGather) {
        CALLS.add(List.of(config.name(), transport, memory, scatterGather));
        return engine();
    }

    private static TransferEngine engine() {
        TransferEngine e = (TransferEngine) Proxy.newProxyInstance(TestEngineProvider.class.getClassLoader(),
                new Class<?>[] {TransferEngine.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> "TestEngineProvider's engine";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        MADE.add(e);
        return e;
    }
}
