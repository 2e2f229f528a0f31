package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.EngineConfig;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EngineBindTest {

    @Test
    void anEngineThatCannotListenNamesTheHostTheUserChose() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            EngineConfig config = EngineConfig.defaults("bind-test").withListen("127.0.0.1", taken.getLocalPort());
            assertThatThrownBy(() -> Node.start(config,
                    new Backends.Spec(TransportKind.LOOPBACK, MemoryKind.DRAM, "127.0.0.1")))
                    .isInstanceOf(TransferException.class)
                    .hasMessageContaining("the engine cannot listen on 127.0.0.1 (any free port; the host comes from --bind")
                    .hasMessageContaining("in use");
        }
    }
}
