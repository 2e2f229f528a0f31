package io.tcpx4j.it.transfer;

import io.tcpx4j.transport.loopback.LoopbackConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TwoEnginesLoopbackIT}'s transfers over loopback transports without I/O threads: each engine's
 * agent thread moves its data sockets' bytes and blocks in its own selector for them.
 */
class TwoEnginesDriverLoopbackIT extends TwoEnginesLoopbackIT {

    @Override
    LoopbackConfig transportConfig() {
        return LoopbackConfig.defaults().withIoThreads(0);
    }

    @Test
    void noThreadButTheAgentsMovesTheBytes() throws Exception {
        move(alpha, beta, true, 0x5EED_0005L);
        assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
                .noneMatch(name -> name.startsWith("tcpx4j-loopback-io-"));
    }
}
