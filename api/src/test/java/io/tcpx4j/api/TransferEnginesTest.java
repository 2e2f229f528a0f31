package io.tcpx4j.api;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The plain factory finds the engine through ServiceLoader. This module's class path holds no engine, so
 * here the factory must say what to add; a provider appears only through a class loader a test builds.
 */
class TransferEnginesTest {

    private static final String SERVICE_FILE = "META-INF/services/io.tcpx4j.api.spi.EngineProvider";

    /** What was closed, in order, across the test doubles below. */
    private final List<String> closed = new ArrayList<>();

    /** Test double of a transport: notes its close. */
    private final class TestTransport implements Transport {
        @Override
        public String name() {
            return "test";
        }

        @Override
        public void close() {
            closed.add("transport");
        }
    }

    private final class TestMemory implements EngineMemory {
        @Override
        public void close() {
            closed.add("memory");
        }
    }

    private final class TestScatterGather implements EngineScatterGather {
        @Override
        public void close() {
            closed.add("scatterGather");
        }
    }

    @BeforeEach
    void forgetCalls() {
        TestEngineProvider.CALLS.clear();
        TestEngineProvider.MADE.clear();
    }

    @Test
    void withoutAnEngineOnTheClassPathCreateNamesTheModuleToAddAndClosesTheTransport() {
        assertThatThrownBy(() -> TransferEngines.create(EngineConfig.defaults("app"), new TestTransport()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no tcpx4j engine on the class path")
                .hasMessageContaining("io.tcpx4j.api.spi.EngineProvider")
                .hasMessageContaining("Add the module tcpx4j-domain")
                .hasMessageContaining("META-INF/services");
        assertThat(closed).containsExactly("transport");
    }

    @Test
    void withoutAnEngineTheGpuVariantClosesTransportScatterGatherAndMemoryInThatOrder() {
        assertThatThrownBy(() -> TransferEngines.create(EngineConfig.defaults("app"), new TestTransport(),
                new TestMemory(), new TestScatterGather()))
                .isInstanceOf(IllegalStateException.class).hasMessage(TransferEngines.NO_PROVIDER);
        assertThat(closed).containsExactly("transport", "scatterGather", "memory");
    }

    @Test
    void aProviderOnTheThreadsContextClassLoaderBuildsTheEngineFromWhatItWasGiven(@TempDir Path dir)
            throws Exception {
        Transport transport = new TestTransport();
        EngineMemory memory = new TestMemory();
        EngineScatterGather scatterGather = new TestScatterGather();
        TransferEngine plain = withServiceFile(dir, TestEngineProvider.class.getName(),
                () -> TransferEngines.create(EngineConfig.defaults("plain"), transport));
        TransferEngine gpu = withServiceFile(dir, TestEngineProvider.class.getName(),
                () -> TransferEngines.create(EngineConfig.defaults("gpu"), transport, memory, scatterGather));

        assertThat(TestEngineProvider.CALLS).containsExactly(List.of("plain", transport),
                List.of("gpu", transport, memory, scatterGather));
        assertThat(TestEngineProvider.MADE).containsExactly(plain, gpu);
        assertThat(closed).as("the provider owns them now").isEmpty();
    }

    @Test
    void aProviderThatCannotBeLoadedIsReportedAndWhatWasGivenIsClosed(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> withServiceFile(dir, "io.tcpx4j.domain.lifecycle.Missing",
                () -> TransferEngines.create(EngineConfig.defaults("app"), new TestTransport())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the tcpx4j engine on the class path cannot be loaded")
                .hasMessageContaining("io.tcpx4j.domain.lifecycle.Missing");
        assertThat(closed).containsExactly("transport");
    }

    /** Runs {@code call} with a context class loader whose service file names {@code provider}. */
    private static <T> T withServiceFile(Path dir, String provider, Callable<T> call) throws Exception {
        Path file = dir.resolve(SERVICE_FILE);
        Files.createDirectories(file.getParent());
        Files.writeString(file, provider + "\n");
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()},
                TransferEnginesTest.class.getClassLoader())) {
            thread.setContextClassLoader(loader);
            return call.call();
        } catch (IOException e) {
            throw new AssertionError(e);
        } finally {
            thread.setContextClassLoader(before);
        }
    }
}
