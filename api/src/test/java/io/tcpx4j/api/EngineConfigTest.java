package io.tcpx4j.api;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EngineConfigTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        EngineConfig c = EngineConfig.defaults("a");
        assertThat(c.name()).isEqualTo("a");
        assertThat(c.listenHost()).isEqualTo("127.0.0.1");
        assertThat(c.listenPort()).isZero();
        assertThat(c.advertiseHost()).isNull();
        assertThat(c.channels()).isEqualTo(2);
        assertThat(c.channelDevices()).isEmpty();
        assertThat(c.chunkSize()).isEqualTo(512 * 1024);
        assertThat(c.sendWindow()).isEqualTo(12);
        assertThat(c.recvWindow()).isEqualTo(16);
        assertThat(c.peerTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.heartbeat()).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.progress()).isEqualTo(new Progress(Progress.Driver.THREAD, Duration.ofNanos(50_000)));
        assertThat(c.controlTls()).isNull();
        assertThat(c.controlTlsClientAuth()).isFalse();
        assertThat(c.inlineLimit()).isEqualTo(32 * 1024);
        assertThat(c.coalesceLimit()).isEqualTo(32 * 1024);
        assertThat(c.deviceCoalesceLimit()).isEqualTo(128 * 1024);
        assertThat(c.agents()).isEqualTo(1);
        assertThat(c.warmUpTransfers()).isZero();
    }

    @Test
    void eachWithChangesItsKnobAndKeepsTheOthers() {
        EngineConfig base = EngineConfig.defaults("a").withChunkSize(4096).withAgents(3).withWarmUp(10);
        assertThat(base.withName("b")).isEqualTo(base.toBuilder().name("b").build());
        assertThat(base.withName("b").chunkSize()).isEqualTo(4096);
        assertThat(base.withListen("0.0.0.0", 7000).listenPort()).isEqualTo(7000);
        assertThat(base.withAdvertiseHost("10.0.0.1").advertiseHost()).isEqualTo("10.0.0.1");
        assertThat(base.withChannels(4).channels()).isEqualTo(4);
        assertThat(base.withChannelDevices(List.of(1, 0)).channelDevices()).containsExactly(1, 0);
        assertThat(base.withWindows(3, 5)).extracting(EngineConfig::sendWindow, EngineConfig::recvWindow)
                .containsExactly(3, 5);
        EngineConfig t = base.withTimeouts(Duration.ofSeconds(9), Duration.ofSeconds(8), Duration.ofSeconds(2));
        assertThat(List.of(t.peerTimeout(), t.connectTimeout(), t.heartbeat()))
                .containsExactly(Duration.ofSeconds(9), Duration.ofSeconds(8), Duration.ofSeconds(2));
        assertThat(base.withShutdownTimeout(Duration.ZERO).shutdownTimeout()).isZero();
        assertThat(base.withProgress(Progress.defaults().withDriver(Progress.Driver.CALLER)).progress().driver())
                .isEqualTo(Progress.Driver.CALLER);
        assertThat(base.withInlineLimit(0).inlineLimit()).isZero();
        assertThat(base.withCoalesceLimit(1).coalesceLimit()).isEqualTo(1);
        assertThat(base.withDeviceCoalesceLimit(2).deviceCoalesceLimit()).isEqualTo(2);
        EngineConfig changed = base.withInlineLimit(0);
        assertThat(changed).isEqualTo(new EngineConfig("a", "127.0.0.1", 0, null, 2, List.of(), 4096, 12, 16,
                Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(5),
                Progress.defaults(), null, false, 0, 32 * 1024, 128 * 1024, 3, 10));
    }

    @Test
    void badValuesFailWithTheRuleTheyBreak() {
        EngineConfig c = EngineConfig.defaults("a");
        assertInvalid(() -> c.withName(""), "name must be 1..255 UTF-8 bytes");
        assertInvalid(() -> c.withChunkSize(EngineConfig.MAX_CHUNK + 1), "chunkSize must be 1..4194304");
        assertInvalid(() -> c.withChannels(65), "channels must be 1..64");
        assertInvalid(() -> c.withWindows(17, 1), "sendWindow must be 1..16");
        assertInvalid(() -> c.withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1)),
                "heartbeat must be shorter than peerTimeout");
        assertInvalid(() -> c.withControlTls(null, true), "controlTlsClientAuth needs controlTls");
        assertInvalid(() -> c.withAgents(65), "agents must be 1..64");
        assertInvalid(() -> c.withListen("127.0.0.1", 65535).withAgents(2),
                "listenPort + agents - 1 must be at most 65535");
        assertInvalid(() -> c.withWarmUp(-1), "warmUpTransfers must be 0..1000000");
        assertInvalid(() -> c.withWarmUp(EngineConfig.MAX_WARM_UP_TRANSFERS + 1), "warmUpTransfers must be 0..1000000");
        assertInvalid(() -> c.withProgress(Progress.defaults().withSpin(Duration.ofSeconds(2))),
                "progress spin must be 0..1 s");
        assertThat(c.withWarmUp(EngineConfig.MAX_WARM_UP_TRANSFERS).warmUpTransfers())
                .isEqualTo(EngineConfig.MAX_WARM_UP_TRANSFERS);
    }

    private static void assertInvalid(Runnable make, String message) {
        assertThatThrownBy(make::run).isInstanceOf(TransferException.class)
                .hasMessageContaining(message)
                .extracting(e -> ((TransferException) e).code()).isEqualTo(TransferException.Code.INVALID_PARAM);
    }
}
