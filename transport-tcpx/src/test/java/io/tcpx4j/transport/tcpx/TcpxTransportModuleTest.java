package io.tcpx4j.transport.tcpx;

import com.google.inject.AbstractModule;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.ProvisionException;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.HostMemory;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.NetTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TcpxTransportModuleTest {

    @TempDir
    Path tmp;

    private static AbstractModule hostMemory() {
        return new AbstractModule() {
            @Override
            protected void configure() {
                bind(DeviceMemory.class).toInstance(new HostMemory());
            }
        };
    }

    @Test
    void configureDoesNoIoAndProvisioningSaysWhatToFix() {
        String missing = tmp.resolve("libnccl-net-missing.so").toString();
        Injector injector = Guice.createInjector(new TcpxTransportModule(TcpxOptions.defaults().withLibrary(missing)),
                hostMemory());
        assertThat(injector.getInstance(TcpxOptions.class).library()).isEqualTo(missing);
        assertThatThrownBy(() -> injector.getInstance(NetTransport.class)).isInstanceOf(ProvisionException.class)
                .hasRootCauseInstanceOf(TransferException.class)
                .cause().hasMessageContaining(missing).hasMessageContaining("tcpx4j.tcpx.library");
    }

    @Test
    void providesOneTransportForBothKeys() {
        Injector injector = Guice.createInjector(new TcpxTransportModule(TcpxOptions.defaults()
                .withLibrary(TestPeers.path("v7")).withProbeInChildProcess(false)), hostMemory());
        NetTransport t = injector.getInstance(NetTransport.class);
        try {
            assertThat(t).isSameAs(injector.getInstance(TcpxTransport.class)).isSameAs(injector.getInstance(NetTransport.class));
            assertThat(t.deviceCount()).isEqualTo(1);
        } finally {
            t.close();
        }
    }
}
