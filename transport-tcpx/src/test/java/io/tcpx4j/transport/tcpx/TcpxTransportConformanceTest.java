package io.tcpx4j.transport.tcpx;

import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.DeviceMemory;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.ScatterGather;
import io.tcpx4j.tck.NetTransportConformanceTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * TcpxTransport over the C test peer against the whole transport conformance suite, once per ncclNet
 * layout the adapter treats differently. Capabilities are whatever the adapter derives from the
 * plugin; each nested class first pins them, so a change in what is declared (and therefore in which
 * TCK paths run: exercised, or NOT_SUPPORTED / landing in place) is a visible test failure.
 *
 *
 * <p>"CUDA" memory is host memory here ({@link PretendVram}): the peer only sees NCCL_PTR_CUDA
 * registrations, which is what switches TCPX to its devmem path.
 */
class TcpxTransportConformanceTest {

    /** The hooks shared by every layout. */
    abstract static class OverTestPeer extends NetTransportConformanceTest {

        private final PretendVram memory = new PretendVram();

        /** v5, v6, v7, v8 or another build of src/test/native/testpeer.c. */
        abstract String peer();

        @Override
        protected NetTransport newTransport() {
            // one dlopen and init per build and process, shared by both endpoints like NCCL ranks of a process
            TcpxTransport t = TcpxTransport.open(TcpxOptions.defaults().withLibrary(TestPeers.path(peer()))
                    .withProbeInChildProcess(false), memory);
            if (TestPeers.realPlugin() != null && t.capabilities(device()).contains(Capability.CUDA_MEMORY)) {
                t.close();
                TestPeers.requireTestPeer("host memory as CUDA memory: PretendVram stands in for GPU memory here,"
                        + " and device " + device() + " of the real plugin takes CUDA memory");
            }
            return t;
        }

        @Override
        protected DeviceMemory deviceMemory() {
            return memory;
        }

        @Override
        protected ScatterGather newScatterGather() {
            return memory.new Unpacking();
        }
    }

    /**
     * ncclNet v7, the table TCPX exports: device handles, UNPACK device type, receives into CUDA memory
     * as bounce-page fragments handed back with irecvConsumed.
     */
    @Nested
    class V7 extends OverTestPeer {

        @Override
        String peer() {
            return "v7";
        }

        @Override
        protected PtrType devmemPtrType() {
            return PtrType.CUDA;
        }

        @Test
        void declaresCudaMemoryAndDevmemReceives() {
            TestPeers.requireTestPeer("builds, whose capabilities are pinned here");
            assertThat(a.capabilities()).containsExactlyInAnyOrder(Capability.CUDA_MEMORY, Capability.DEVMEM_RECEIVE);
            assertThat(a.capabilities(0)).isEqualTo(a.capabilities());
        }
    }

    /**
     * ncclNet v6 (aws-ofi-nccl and older NCCL plugins): no device handles, no irecvConsumed, no device
     * type. The peer advertises NCCL_PTR_CUDA, so CUDA memory is declared, but receives into it land in
     * place: DEVMEM_RECEIVE is not declared and the TCK checks that no fragments appear.
     */
    @Nested
    class V6 extends OverTestPeer {

        @Override
        String peer() {
            return "v6";
        }

        @Test
        void declaresCudaMemoryOnly() {
            TestPeers.requireTestPeer("builds, whose capabilities are pinned here");
            assertThat(a.capabilities()).containsExactly(Capability.CUDA_MEMORY);
        }
    }

    /**
     * A v7 plugin whose only device takes CUDA memory by its pointer support but has no PCI path, as TCPX
     * on a virtual interface such as lo: CUDA registration there would crash TCPX, so the device declares
     * neither CUDA memory nor devmem receives, and the TCK sees them undeclared (NOT_SUPPORTED, receives in
     * place) rather than refused after being declared.
     */
    @Nested
    class V7WithoutPciPath extends OverTestPeer {

        @Override
        String peer() {
            return "v7-nopci";
        }

        @Test
        void declaresNoCapabilityForTheDeviceAlthoughItsPointerSupportNamesCuda() {
            TestPeers.requireTestPeer("builds, whose capabilities are pinned here");
            assertThat(a.properties(0).supports(PtrType.CUDA)).isTrue();
            assertThat(a.properties(0).pciPath()).isEmpty();
            assertThat(a.capabilities(0)).isEmpty();
            assertThat(a.capabilities()).isEmpty();
        }
    }

    /**
     * A host-memory-only v7 plugin, as TCPX built with HOST_PTR_ONLY: it still reports the UNPACK device
     * type and gives device handles, but takes no CUDA memory, so nothing can land in bounce pages. The
     * adapter declares nothing; the TCK checks NOT_SUPPORTED for CUDA registrations and fault injection.
     */
    @Nested
    class V7HostOnly extends OverTestPeer {

        @Override
        String peer() {
            return "v7-hostonly";
        }

        @Test
        void declaresNoCapability() {
            TestPeers.requireTestPeer("builds, whose capabilities are pinned here");
            assertThat(a.properties(0).netDeviceType()).isEqualTo(DeviceProperties.NET_DEVICE_UNPACK);
            assertThat(a.capabilities()).isEmpty();
        }
    }

    /**
     * A v7 plugin whose connect waits until the peer accepted and whose accept waits until a peer
     * connected (nccl-fastsocket's accept waits in accept(2)). The suite polls connect and accept in
     * turn on one thread, which would stop in the first blocking call if the adapter made it there.
     */
    @Nested
    class V7Blocking extends OverTestPeer {

        @Override
        String peer() {
            return "v7-blocking";
        }

        @Override
        protected PtrType devmemPtrType() {
            return PtrType.CUDA;
        }

        @Test
        void declaresCudaMemoryAndDevmemReceives() {
            TestPeers.requireTestPeer("builds, whose capabilities are pinned here");
            assertThat(a.capabilities()).containsExactlyInAnyOrder(Capability.CUDA_MEMORY, Capability.DEVMEM_RECEIVE);
            assertThat(a.capabilities(0)).isEqualTo(a.capabilities());
        }
    }

    /**
     * ncclNet v8 with null getDeviceMr and irecvConsumed and a HOST device type (aws-ofi-nccl): NCCL
     * accepts such a table, and so does the adapter. CUDA receives land in place.
     */
    @Nested
    class V8NullOptionalEntries extends OverTestPeer {

        @Override
        String peer() {
            return "v8-nullopt";
        }

        @Test
        void declaresCudaMemoryOnly() {
            TestPeers.requireTestPeer("builds, whose capabilities are pinned here");
            assertThat(a.capabilities()).containsExactly(Capability.CUDA_MEMORY);
        }
    }
}
