package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.TransferException.Code;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NcclResultTest {

    @Test
    void dataPathFailuresMeanThePeerWentAway() {
        assertThat(NcclResult.dataCode(2)).isEqualTo(Code.REMOTE_DISCONNECT);
        assertThat(NcclResult.dataCode(3)).isEqualTo(Code.REMOTE_DISCONNECT);
        assertThat(NcclResult.dataCode(6)).isEqualTo(Code.REMOTE_DISCONNECT);
        assertThat(NcclResult.dataCode(1)).isEqualTo(Code.BACKEND);
        assertThat(NcclResult.dataCode(4)).isEqualTo(Code.INVALID_PARAM);
    }

    @Test
    void controlPathFailuresAreBackend() {
        assertThat(NcclResult.controlCode(2)).isEqualTo(Code.BACKEND);
        assertThat(NcclResult.controlCode(3)).isEqualTo(Code.BACKEND);
        assertThat(NcclResult.controlCode(6)).isEqualTo(Code.BACKEND);
        assertThat(NcclResult.controlCode(5)).isEqualTo(Code.INVALID_PARAM);
        assertThat(NcclResult.control("listen", 3)).hasMessageContaining("ncclInternalError");
    }
}
