package io.tcpx4j.nixl;

import java.util.Map;

/**
 * The contract against the real engine over the loopback transport, assembled by the production
 * composition root ({@link NixlBackends}) exactly as the C bridge assembles it.
 */
class NixlBackendOverLoopbackTest extends NixlBackendContract {

    @Override
    NixlBackend newBackend(String name) {
        return NixlBackends.create(name, Map.of("transport", "loopback", "cuda", "off"));
    }

    @Override
    int bigTransferBytes() {
        return 64 * MIB;
    }
}
