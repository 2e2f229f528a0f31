package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.HostMemory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One copy of a net plugin library per process: TCPX aborts the process when a second copy of its
 * library loads from another path, so a copy of a loaded library is refused before it is opened, with
 * both paths named, while another name for the loaded file is served by its plugin.
 */
class OnePluginLibraryPerProcessTest {

    @TempDir
    Path tmp;

    private static TcpxOptions options(String library) {
        return TcpxOptions.defaults().withLibrary(library).withProbeInChildProcess(false);
    }

    /** The test peer loaded from {@code first}, and a byte-for-byte copy of it at another path. */
    private Path copyElsewhere(String first) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("elsewhere"));
        return Files.copy(Path.of(first), dir.resolve(Path.of(first).getFileName()));
    }

    @Test
    void twoTransportsOverTwoPathsOfOneLibraryGetAClearErrorNamingBothAndTheCopyIsNeverOpened() throws IOException {
        String first = TestPeers.copy("v7", tmp, "first");
        Path second = copyElsewhere(first);
        try (TcpxTransport t = TcpxTransport.open(options(first), new HostMemory())) {
            assertThatThrownBy(() -> TcpxTransport.open(options(second.toString()), new HostMemory()))
                    .isInstanceOfSatisfying(TransferException.class, e -> assertThat(e.code())
                            .isEqualTo(TransferException.Code.INVALID_PARAM))
                    .hasMessageContaining(second + " is a copy of the net plugin library " + Path.of(first))
                    .hasMessageContaining("use " + Path.of(first) + " for every transport");
            assertThat(Files.readString(Path.of("/proc/self/maps"))).as("the copy was never mapped")
                    .contains(first).doesNotContain(second.toString());
            assertThat(t.deviceCount()).as("the first transport is unharmed").isEqualTo(1);
        }
    }

    @Test
    void theProbeReportsTheCopyAfterTheChildJvmFoundTheLibraryItselfUsable() throws IOException {
        String first = TestPeers.copy("v7", tmp, "probed");
        PluginLoader.load(options(first));
        Path second = copyElsewhere(first);
        Throwable t = Tcpx.probe(options(second.toString()).withProbeInChildProcess(true));
        assertThat(t).isInstanceOf(TransferException.class)
                .hasMessageContaining(second + " is a copy of the net plugin library " + Path.of(first));
    }

    @Test
    void anotherNameForTheLoadedFileIsServedByItsPlugin() throws IOException {
        String first = TestPeers.copy("v7", tmp, "named");
        NetPlugin p = PluginLoader.load(options(first));
        Path symlink = Files.createSymbolicLink(tmp.resolve("symlink.so"), Path.of(first));
        Path hardLink = Files.createLink(tmp.resolve("hardlink.so"), Path.of(first));
        Path relative = Path.of("").toAbsolutePath().relativize(Path.of(first));
        assertThat(PluginLoader.load(options(symlink.toString()))).isSameAs(p);
        assertThat(PluginLoader.load(options(hardLink.toString()))).isSameAs(p);
        assertThat(PluginLoader.load(options(relative.toString()))).isSameAs(p);
    }

    @Test
    void librariesWithOtherBytesAreOtherPluginsAndLoad() {
        NetPlugin v7 = PluginLoader.load(options(TestPeers.path("v7")));
        NetPlugin v8 = PluginLoader.load(options(TestPeers.path("v8")));
        assertThat(v8).isNotSameAs(v7);
        assertThat(v8.version()).isEqualTo(NetPluginVersion.V8);
    }
}
