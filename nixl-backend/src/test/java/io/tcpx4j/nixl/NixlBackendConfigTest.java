package io.tcpx4j.nixl;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.Progress;
import io.tcpx4j.transport.loopback.LoopbackTransportModule;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NixlBackendConfigTest {

    /** What nixlbench and similar hosts send: every advertised option, unchanged. */
    private static Map<String, String> advertisedPassedBack() {
        return new HashMap<>(NixlBackendConfig.ADVERTISED);
    }

    @Test
    void environmentWinsOverAnAdvertisedDefaultPassedBack() {
        NixlBackendConfig c = NixlBackendConfig.parse("A", advertisedPassedBack(),
                Map.of("TCPX4J_NIXL_TRANSPORT", "tcpx", "TCPX4J_NIXL_CUDA", "off", "TCPX4J_NIXL_LISTEN_HOST", "10.0.0.7"));

        assertThat(c.transport()).isEqualTo("tcpx");
        assertThat(c.cuda()).isEqualTo("off");
        assertThat(c.engine().listenHost()).isEqualTo("10.0.0.7");
        assertThat(c.source("transport")).isEqualTo("TCPX4J_NIXL_TRANSPORT");
        assertThat(c.source("cuda")).isEqualTo("TCPX4J_NIXL_CUDA");
    }

    @Test
    void aParameterThatDiffersFromItsDefaultWinsOverTheEnvironment() {
        Map<String, String> params = advertisedPassedBack();
        params.put("transport", LoopbackTransportModule.class.getName());
        params.put("cuda", "on");

        NixlBackendConfig c = NixlBackendConfig.parse("A", params,
                Map.of("TCPX4J_NIXL_TRANSPORT", "tcpx", "TCPX4J_NIXL_CUDA", "off"));

        assertThat(c.transport()).isEqualTo(LoopbackTransportModule.class.getName());
        assertThat(c.cuda()).isEqualTo("on");
        assertThat(c.source("transport")).isEqualTo("parameter");
    }

    @Test
    void withoutParametersOrEnvironmentTheAdvertisedDefaultsApply() {
        NixlBackendConfig c = NixlBackendConfig.parse("A", Map.of(), Map.of());

        assertThat(c.transport()).isEqualTo("loopback");
        assertThat(c.cuda()).isEqualTo("auto");
        assertThat(c.engine().listenHost()).isEqualTo("127.0.0.1");
        assertThat(c.source("transport")).isEqualTo("default");
    }

    @Test
    void blankValuesCountAsUnset() {
        NixlBackendConfig c = NixlBackendConfig.parse("A", Map.of("channels", " ", "transport", ""),
                Map.of("TCPX4J_NIXL_CHANNELS", "5"));

        assertThat(c.engine().channels()).isEqualTo(5);
        assertThat(c.transport()).isEqualTo("loopback");
    }

    @Test
    void everyAdvertisedKeyIsAcceptedAndTheDefaultsAreEmptyOrValid() {
        NixlBackendConfig c = NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of());

        assertThat(NixlBackendConfig.KEYS).containsExactlyElementsOf(NixlBackendConfig.ADVERTISED.keySet());
        assertThat(c.engine().listenPort()).isZero();
    }

    @Test
    void anUnknownKeyIsRefusedWithItsName() {
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("trasnport", "tcpx"), Map.of()))
                .isInstanceOfSatisfying(TransferException.class,
                        e -> assertThat(e.code()).isEqualTo(TransferException.Code.INVALID_PARAM))
                .hasMessageContaining("unknown TCPX backend parameter 'trasnport'")
                .hasMessageContaining("transport");
    }

    @Test
    void aBadValueNamesItsKey() {
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("listen_port", "http"), Map.of()))
                .hasMessageContaining("'listen_port' must be an integer, not 'http'");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_CUDA", "maybe")))
                .hasMessageContaining("'cuda' must be auto, on or off, not 'maybe'");
    }

    @Test
    void byteCountsTakeSizeSuffixesAndSayWhatIsWrong() {
        NixlBackendConfig c = NixlBackendConfig.parse("A", Map.of("chunk_size", "1M", "inline_limit", "256K",
                "coalesce_limit", "65536", "device_coalesce_limit", "0"), Map.of("TCPX4J_NIXL_CHANNELS", "3"));
        assertThat(c.engine().chunkSize()).isEqualTo(1 << 20);
        assertThat(c.engine().inlineLimit()).isEqualTo(256 * 1024);
        assertThat(c.engine().coalesceLimit()).isEqualTo(65536);
        assertThat(c.engine().deviceCoalesceLimit()).isZero();
        assertThat(NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_CHUNK_SIZE", "256k")).engine().chunkSize())
                .isEqualTo(256 * 1024);

        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("chunk_size", "1.5M"), Map.of()))
                .isInstanceOfSatisfying(TransferException.class,
                        e -> assertThat(e.code()).isEqualTo(TransferException.Code.INVALID_PARAM))
                .hasMessageContaining("'chunk_size' must be a size in bytes (e.g. 524288 or 512K), not '1.5M'");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("inline_limit", "4G"), Map.of()))
                .hasMessageContaining("'inline_limit' of 4G is too large");
    }

    @Test
    void cudaAutoWithoutTheModuleOnTheClassPathMovesHostMemoryOnly() {
        // cuda-unpack is not a dependency of this module, so its class is absent here
        assertThat(NixlBackends.onClassPath(NixlBackends.CUDA_MODULE)).isFalse();

        assertThat(NixlBackends.cudaModule("auto", "default", true)).isNull();
        assertThat(NixlBackends.cudaModule("off", "TCPX4J_NIXL_CUDA", true)).isNull();
        assertThatThrownBy(() -> NixlBackends.cudaModule("on", "parameter", false))
                .isInstanceOfSatisfying(TransferException.class,
                        e -> assertThat(e.code()).isEqualTo(TransferException.Code.NOT_SUPPORTED))
                .hasMessageContaining(NixlBackends.CUDA_MODULE);
    }

    @Test
    void progressIsTheEnginesThreadByDefaultAndTheCallersOnRequest() {
        NixlBackendConfig byDefault = NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of());
        assertThat(byDefault.inlineProgress()).isFalse();
        assertThat(byDefault.engine().progress().driver()).isEqualTo(Progress.Driver.THREAD);
        NixlBackendConfig inline = NixlBackendConfig.parse("A", Map.of("progress", "inline"), Map.of());
        assertThat(inline.inlineProgress()).isTrue();
        assertThat(inline.engine().progress().driver()).isEqualTo(Progress.Driver.CALLER);
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of("TCPX4J_NIXL_PROGRESS", "INLINE"))
                .inlineProgress()).isTrue();
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("progress", "sometimes"), Map.of()))
                .isInstanceOf(TransferException.class).hasMessageContaining("'progress' must be inline or thread");
    }

    @Test
    void inlineLimitIsAnEngineSettingOf128KibByDefaultOnEveryHost() {
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of()).engine().inlineLimit())
                .isEqualTo(128 * 1024).isEqualTo(NixlBackendConfig.DEFAULT_INLINE_LIMIT);
        assertThat(NixlBackendConfig.parse("A", Map.of("inline_limit", "0"), Map.of()).engine().inlineLimit()).isZero();
        assertThat(NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_INLINE_LIMIT", "4096")).engine()
                .inlineLimit()).isEqualTo(4096);
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("inline_limit", "2000000"), Map.of()))
                .hasMessageContaining("inlineLimit");
    }

    @Test
    void coalesceLimitIsAnEngineSettingWithTheEnginesDefault() {
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of()).engine().coalesceLimit())
                .isEqualTo(io.tcpx4j.api.EngineConfig.DEFAULT_COALESCE);
        assertThat(NixlBackendConfig.parse("A", Map.of("coalesce_limit", "0"), Map.of()).engine().coalesceLimit())
                .isZero();
        assertThat(NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_COALESCE_LIMIT", "4096")).engine()
                .coalesceLimit()).isEqualTo(4096);
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("coalesce_limit", "5000000"), Map.of()))
                .hasMessageContaining("coalesceLimit");
    }

    @Test
    void warmUpRunsTheDefaultTransfersUnlessSetAndRefusesOutOfRange() {
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of()).engine().warmUpTransfers())
                .isEqualTo(io.tcpx4j.api.EngineConfig.DEFAULT_WARM_UP_TRANSFERS);
        assertThat(NixlBackendConfig.parse("A", Map.of("warm_up", "0"), Map.of()).engine().warmUpTransfers()).isZero();
        assertThat(NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_WARM_UP", "500")).engine().warmUpTransfers())
                .isEqualTo(500);
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("warm_up", "-1"), Map.of()))
                .hasMessageContaining("'warm_up' must be 0..");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("warm_up", "lots"), Map.of()))
                .hasMessageContaining("'warm_up' must be an integer");
    }

    @Test
    void ioThreadsSetTheLoopbackTransportsThreadsAndOnlyThose() {
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of()).ioThreads()).isEqualTo(2);
        assertThat(NixlBackendConfig.parse("A", Map.of("io_threads", "0"), Map.of()).ioThreads()).isZero();
        assertThat(NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_IO_THREADS", "4")).ioThreads())
                .isEqualTo(4);
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("io_threads", "17"), Map.of()))
                .hasMessageContaining("'io_threads' must be 0..16");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("io_threads", "0", "transport", "tcpx"), Map.of()))
                .hasMessageContaining("'io_threads' applies to transport=loopback only");
    }

    @Test
    void spinIsMicrosecondsForTheThreadDriverOnly() {
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of()).engine().progress().spin())
                .isEqualTo(io.tcpx4j.api.Progress.DEFAULT_SPIN);
        assertThat(NixlBackendConfig.parse("A", Map.of("spin", "0"), Map.of()).engine().progress().spin()).isZero();
        NixlBackendConfig fromEnv = NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_SPIN", "20"));
        assertThat(fromEnv.engine().progress().spin()).isEqualTo(java.time.Duration.ofNanos(20_000));
        assertThat(fromEnv.source("spin")).isEqualTo("TCPX4J_NIXL_SPIN");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("spin", "1000001"), Map.of()))
                .hasMessageContaining("'spin' must be 0..1000000 microseconds");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("spin", "-1"), Map.of()))
                .hasMessageContaining("'spin' must be 0..1000000 microseconds");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("spin", "0", "progress", "inline"), Map.of()))
                .hasMessageContaining("'spin' applies to progress=thread only");
    }

    @Test
    void pollWaitIsMicrosecondsForTheThreadDriverOnly() {
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of()).pollWait())
                .isEqualTo(java.time.Duration.ofNanos(100_000));
        assertThat(NixlBackendConfig.parse("A", Map.of("poll_wait", "0"), Map.of()).pollWait()).isZero();
        NixlBackendConfig fromEnv = NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_POLL_WAIT", "1000"));
        assertThat(fromEnv.pollWait()).isEqualTo(java.time.Duration.ofMillis(1));
        assertThat(fromEnv.source("poll_wait")).isEqualTo("TCPX4J_NIXL_POLL_WAIT");
        assertThat(NixlBackendConfig.parse("A", Map.of("progress", "inline"), Map.of()).pollWait()).isZero();
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("poll_wait", "1000001"), Map.of()))
                .hasMessageContaining("'poll_wait' must be 0..1000000 microseconds");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("poll_wait", "-1"), Map.of()))
                .hasMessageContaining("'poll_wait' must be 0..1000000 microseconds");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("poll_wait", "50", "progress", "inline"), Map.of()))
                .hasMessageContaining("'poll_wait' applies to progress=thread only");
    }

    @Test
    void agentsIsAnEngineSettingWithTheEnginesDefault() {
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of()).engine().agents()).isEqualTo(1);
        assertThat(NixlBackendConfig.parse("A", Map.of("agents", "4"), Map.of()).engine().agents()).isEqualTo(4);
        assertThat(NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_AGENTS", "3")).engine().agents())
                .isEqualTo(3);
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("agents", "65"), Map.of()))
                .hasMessageContaining("agents must be 1..64");
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("agents", "many"), Map.of()))
                .hasMessageContaining("'agents' must be an integer");
    }

    @Test
    void deviceCoalesceLimitIsAnEngineSettingWithTheEnginesDefault() {
        assertThat(NixlBackendConfig.parse("A", advertisedPassedBack(), Map.of()).engine().deviceCoalesceLimit())
                .isEqualTo(io.tcpx4j.api.EngineConfig.DEFAULT_DEVICE_COALESCE);
        assertThat(NixlBackendConfig.parse("A", Map.of("device_coalesce_limit", "0"), Map.of()).engine()
                .deviceCoalesceLimit()).isZero();
        assertThat(NixlBackendConfig.parse("A", Map.of(), Map.of("TCPX4J_NIXL_DEVICE_COALESCE_LIMIT", "65536"))
                .engine().deviceCoalesceLimit()).isEqualTo(65536);
        assertThatThrownBy(() -> NixlBackendConfig.parse("A", Map.of("device_coalesce_limit", "5000000"), Map.of()))
                .hasMessageContaining("deviceCoalesceLimit");
    }
}
