package io.tcpx4j.nixl;

import java.util.HashMap;
import java.util.Map;

/**
 * The entry point that libtcpx4j_nixl_bridge calls through JNI. It only turns the C side's
 * parameter arrays into a map; everything else is {@link NixlBackend}'s methods, called directly.
 *
 * <p>Stateless and thread-safe.
 */
public final class NixlBridge {

    private NixlBridge() {
    }

    /** Creates and starts a backend; see {@link NixlBackends#create}. */
    public static NixlBackend create(String agent, String[] keys, String[] values) {
        if (keys.length != values.length) {
            throw new IllegalArgumentException("keys and values differ in length");
        }
        Map<String, String> params = new HashMap<>();
        for (int i = 0; i < keys.length; i++) {
            params.put(keys[i], values[i]);
        }
        return NixlBackends.create(agent, params);
    }
}
