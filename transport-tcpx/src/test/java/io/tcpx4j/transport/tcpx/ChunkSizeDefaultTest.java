package io.tcpx4j.transport.tcpx;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the loader says when it sets NCCL_DYNAMIC_CHUNK_SIZE: the plain number the plugin reads, and no
 * plugin name, since the line comes before the plugin is known (FastSocket and Libfabric get it too).
 */
class ChunkSizeDefaultTest {

    private final List<String> lines = new ArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            lines.add(new SimpleFormatter().formatMessage(record));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private final Logger jul = Logger.getLogger(PluginLoader.class.getName());
    private String saved;
    private Locale locale;

    @BeforeEach
    void capture() {
        saved = LibC.getenv(PluginLoader.CHUNK_ENV);
        locale = Locale.getDefault();
        Locale.setDefault(Locale.US); // a locale that groups thousands with a comma
        jul.addHandler(handler);
    }

    @AfterEach
    void restore() {
        jul.removeHandler(handler);
        Locale.setDefault(locale);
        if (saved == null) {
            LibC.unsetenv(PluginLoader.CHUNK_ENV);
        } else {
            LibC.setenv(PluginLoader.CHUNK_ENV, saved);
        }
    }

    @Test
    void anUnsetVariableIsSetAndLoggedAsThePlainNumberForTheNetPlugin() {
        LibC.unsetenv(PluginLoader.CHUNK_ENV);
        PluginLoader.applyChunkSizeDefault(524_288);
        assertThat(LibC.getenv(PluginLoader.CHUNK_ENV)).isEqualTo("524288");
        assertThat(lines).containsExactly("NCCL_DYNAMIC_CHUNK_SIZE was unset; set it to 524288 for the net plugin");
    }

    @Test
    void aDifferentValueFromTheEnvironmentIsKeptAndTheChunkSizeLoggedAsThePlainNumber() {
        LibC.setenv(PluginLoader.CHUNK_ENV, "1048576");
        PluginLoader.applyChunkSizeDefault(524_288);
        assertThat(LibC.getenv(PluginLoader.CHUNK_ENV)).isEqualTo("1048576");
        assertThat(lines).singleElement().asString().contains("chunks are 524288 bytes").doesNotContain("524,288");
    }
}
