package io.tcpx4j.transport.tcpx;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class LibraryLocatorTest {

    private static List<String> names(String explicit, Map<String, String> props, Map<String, String> env) {
        return LibraryLocator.candidates(explicit, props::get, env::get).stream()
                .map(LibraryLocator.Candidate::name).toList();
    }

    @Test
    void explicitPathWinsAndIsTheOnlyCandidate() {
        assertThat(names("/opt/x.so", Map.of(LibraryLocator.PROPERTY, "/p.so"), Map.of())).containsExactly("/opt/x.so");
        assertThat(names(null, Map.of(LibraryLocator.PROPERTY, "/p.so"), Map.of(LibraryLocator.ENV, "/e.so")))
                .containsExactly("/p.so");
        assertThat(names(null, Map.of(), Map.of(LibraryLocator.ENV, "/e.so", "NCCL_NET_PLUGIN", "tcpx")))
                .containsExactly("/e.so");
    }

    @Test
    void ncclNamingThenLoaderPathThenA3Defaults() {
        assertThat(names(null, Map.of(), Map.of("NCCL_NET_PLUGIN", "tcpx"))).containsExactly(
                "libnccl-net-tcpx.so", "libnccl-net.so",
                "/usr/local/tcpx/lib64/libnccl-net-tcpx.so", "/var/lib/tcpx/lib64/libnccl-net.so");
        assertThat(names(null, Map.of(), Map.of("NCCL_NET_PLUGIN", "/opt/p/libnccl-net.so")))
                .startsWith("/opt/p/libnccl-net.so", "libnccl-net.so");
        assertThat(names(null, Map.of(), Map.of())).containsExactly("libnccl-net.so",
                "/usr/local/tcpx/lib64/libnccl-net-tcpx.so", "/var/lib/tcpx/lib64/libnccl-net.so");
        assertThat(names(null, Map.of(), Map.of("NCCL_NET_PLUGIN", "none"))).first().isEqualTo("libnccl-net.so");
    }

    @Test
    void loaderNamesAreAlwaysTriedPathsOnlyWhenTheFileExists() {
        List<LibraryLocator.Candidate> c = LibraryLocator.candidates(null, k -> null, k -> null);
        assertThat(LibraryLocator.worthTrying(c.get(0), p -> false)).as(c.get(0).name()).isTrue();
        assertThat(LibraryLocator.worthTrying(c.get(1), p -> false)).isFalse();
        assertThat(LibraryLocator.worthTrying(c.get(1), p -> p.equals(Path.of(LibraryLocator.A3_TCPX)))).isTrue();
        assertThat(c.get(1).toString()).contains("A3 default");
    }
}
