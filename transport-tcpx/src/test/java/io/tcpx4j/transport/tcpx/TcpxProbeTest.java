package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.TransferException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The availability probe: real library, real init in a child JVM. Each failure gives a message that
 * says what to fix, and this JVM survives a plugin that calls exit(1) in init.
 */
class TcpxProbeTest {

    @TempDir
    Path tmp;

    @AfterEach
    void cleanEnv() {
        LibC.unsetenv("TCPX4J_TESTPEER_INIT_EXIT");
        LibC.unsetenv("TCPX4J_TESTPEER_INIT_FAIL");
        System.clearProperty(LibraryLocator.PROPERTY);
        Tcpx.resetForTests();
    }

    private static TcpxOptions child(String library) {
        return TcpxOptions.defaults().withLibrary(library);
    }

    @Test
    void workingPluginIsAvailableThroughTheSystemProperty() {
        System.setProperty(LibraryLocator.PROPERTY, TestPeers.copy("v7", tmp, "probe-ok"));
        Tcpx.resetForTests();
        assertThat(Tcpx.unavailabilityCause()).isNull();
        assertThat(Tcpx.isAvailable()).isTrue();
        Tcpx.ensureAvailable();
        assertThat(LibC.getenv(PluginLoader.CHUNK_ENV)).as("set before init when unset").isNotNull();
    }

    @Test
    void missingLibraryNamesThePathsTriedAndWhatToSet() {
        String path = tmp.resolve("libnccl-net-nothere.so").toString();
        Throwable t = Tcpx.probe(child(path));
        assertThat(t).isInstanceOf(TransferException.class)
                .hasMessageContaining(path)
                .hasMessageContaining("tcpx4j.tcpx.library")
                .hasMessageContaining("TCPX4J_NET_PLUGIN");
        assertThat(((TransferException) t).code()).isEqualTo(TransferException.Code.NOT_SUPPORTED);
    }

    @Test
    void ensureAvailableKeepsTheFirstErrorAsCause() {
        System.setProperty(LibraryLocator.PROPERTY, tmp.resolve("absent.so").toString());
        Tcpx.resetForTests();
        assertThat(Tcpx.isAvailable()).isFalse();
        Throwable cause = Tcpx.unavailabilityCause();
        assertThatThrownBy(Tcpx::ensureAvailable).isInstanceOf(TransferException.class)
                .hasMessageContaining("TCPX is unavailable").hasCause(cause);
        assertThat(Tcpx.unavailabilityCause()).as("the answer is kept").isSameAs(cause);
    }

    @Test
    void missingSymbolListsTheProbedTables() {
        Throwable t = Tcpx.probe(child(TestPeers.path("nosym")));
        assertThat(t).isInstanceOf(TransferException.class)
                .hasMessageContaining("ncclNetPlugin_v8, ncclNetPlugin_v7, ncclNetPlugin_v6, ncclNetPlugin_v5")
                .hasMessageContaining("libtcpx4j-net-testpeer-nosym.so");
    }

    @Test
    void failingInitIsReportedWithThePluginLog() {
        LibC.setenv("TCPX4J_TESTPEER_INIT_FAIL", "1");
        Throwable t = Tcpx.probe(child(TestPeers.copy("v7", tmp, "probe-fail")));
        assertThat(t).isInstanceOf(TransferException.class)
                .hasMessageContaining("init returned ncclInternalError")
                .hasMessageContaining("TCPX4J_TESTPEER_INIT_FAIL");
        assertThat(((TransferException) t).code()).isEqualTo(TransferException.Code.BACKEND);
    }

    @Test
    void exitInInitEndsOnlyTheChildAndTellsToCheckTheCudaDriver() {
        LibC.setenv("TCPX4J_TESTPEER_INIT_EXIT", "1");
        String lib = TestPeers.copy("v7", tmp, "probe-exit");
        Throwable t = Tcpx.probe(child(lib));
        // We are still here: the exit(1) happened in the child JVM.
        assertThat(t).isInstanceOf(TransferException.class)
                .hasMessageContaining("exit status 1")
                .hasMessageContaining("CUDA driver")
                .hasMessageContaining("CU failure"); // the plugin's WARN, as its format string
        LibC.unsetenv("TCPX4J_TESTPEER_INIT_EXIT");
        assertThat(Tcpx.probe(child(lib))).as("the library was never initialised in this JVM; now it works").isNull();
    }
}
