package io.tcpx4j.domain.datapath;

import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.registration.RegistrationGroup;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class RequestRingTest {

    private record Registration(long address, long size, PtrType type) implements MemoryRegistration {
    }

    private final List<String> calls = new ArrayList<>();
    /** Registers and deregisters, recording the calls; nothing else is called here. */
    private final NetTransport transport = (NetTransport) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {NetTransport.class}, (proxy, method, args) -> {
                calls.add(method.getName());
                return method.getName().equals("register")
                        ? new Registration((long) args[1], (long) args[2], (PtrType) args[3]) : null;
            });
    private final Comm comm = new Comm() { };
    private final RequestRing ring = new RequestRing();

    @Test
    void theLastRegistrationServesOnlyItsOwnGroup() {
        RegistrationGroup g = new RegistrationGroup(-1, 0x1000, 4096, PtrType.HOST);
        RegistrationGroup other = new RegistrationGroup(-1, 0x9000, 4096, PtrType.HOST);
        MemoryRegistration mr = g.register(transport, comm);
        ring.rememberRegistration(g, mr);

        assertThat(ring.lastRegistration(g)).isSameAs(mr);
        assertThat(ring.lastRegistration(other)).isNull();
    }

    @Test
    void aDroppedRegistrationIsNotServedAgain() {
        RegistrationGroup g = new RegistrationGroup(-1, 0x1000, 4096, PtrType.HOST);
        ring.rememberRegistration(g, g.register(transport, comm));
        g.forget(transport, comm);
        assertThat(calls).containsExactly("register", "deregister");
        assertThat(ring.lastRegistration(g)).isNull();

        ring.rememberRegistration(g, g.register(transport, comm));
        g.forget(transport, comm);
        assertThat(ring.lastRegistration(g)).isNull();
    }
}
