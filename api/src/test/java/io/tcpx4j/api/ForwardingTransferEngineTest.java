package io.tcpx4j.api;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ForwardingTransferEngineTest {

    /** A value of each parameter type the engine's methods take (null for references). */
    private static Object argument(Class<?> type) {
        if (type == int.class) {
            return 0;
        }
        if (type == long.class) {
            return 0L;
        }
        if (type == boolean.class) {
            return false;
        }
        return null;
    }

    @Test
    void everyMethodOfTheEngineGoesToTheDelegate() throws Exception {
        List<String> received = new ArrayList<>();
        TransferEngine recording = (TransferEngine) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {TransferEngine.class}, (proxy, method, args) -> {
                    received.add(method.getName());
                    Class<?> r = method.getReturnType();
                    return r.isPrimitive() && r != void.class ? argument(r) : null;
                });
        TransferEngine forwarding = new ForwardingTransferEngine(recording) {
        };
        List<String> called = new ArrayList<>();
        for (Method m : TransferEngine.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            Object[] args = new Object[m.getParameterCount()];
            for (int i = 0; i < args.length; i++) {
                args[i] = argument(m.getParameterTypes()[i]);
            }
            m.invoke(forwarding, args);
            called.add(m.getName());
        }
        assertThat(called).contains("session", "close", "stats", "onNotification", "driveUntilEnded", "progress");
        assertThat(received).containsExactlyElementsOf(called);
    }
}
