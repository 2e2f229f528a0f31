package io.tcpx4j.domain;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.protocol.ControlFrame;

/**
 * The rules of the control stream's handshake: what an acceptor requires of a HELLO before it admits
 * the connection, and what a dialer requires of the HELLO_OK that answers it.
 */
final class Handshake {

    /** Frames a peer may send before it proved it holds our secret. */
    static final int UNAUTHENTICATED_MAX_FRAME = 1024;
    /** Status in REJECT that means "a crossing connection of ours wins; use that one". */
    static final int REJECT_DUPLICATE = 1;

    /** Why an incoming HELLO is refused: the NIXL status sent back in REJECT, and the reason. */
    record Refusal(int status, String why) {
        Refusal(Code code, String why) {
            this(code.nixlStatus(), why);
        }
    }

    private Handshake() {
    }

    /** Checks an incoming HELLO against this engine; null if the peer may be admitted. */
    static Refusal check(ControlFrame.Hello h, LocalIdentity self) {
        if (h.version() != ControlFrame.PROTOCOL_VERSION) {
            return new Refusal(Code.NOT_SUPPORTED, "protocol version " + h.version() + ", this engine speaks "
                    + ControlFrame.PROTOCOL_VERSION);
        }
        if (!self.secretMatches(h.secret())) {
            return new Refusal(Code.NOT_ALLOWED, "wrong connection secret");
        }
        if (h.name().equals(self.name())) {
            return new Refusal(Code.INVALID_PARAM, "peer uses this engine's own name " + h.name());
        }
        if (h.channels() < 1) {
            return new Refusal(Code.INVALID_PARAM, "no channels");
        }
        return null;
    }

    /** The refusal sent to the loser of a crossing dial. */
    static Refusal duplicate(LocalIdentity self) {
        return new Refusal(REJECT_DUPLICATE, "a crossing connection dialed by " + self.name() + " wins");
    }

    /** Checks the HELLO_OK answering a dial of {@code dialed} that asked for {@code channels} channels. */
    static void check(ControlFrame.HelloOk ok, String dialed, int channels) {
        if (!ok.name().equals(dialed)) {
            throw new TransferException(Code.REMOTE_DISCONNECT, "dialed " + dialed + " but " + ok.name() + " answered");
        }
        if (ok.channels() < 1 || ok.channels() > channels) {
            throw new TransferException(Code.REMOTE_DISCONNECT,
                    "peer chose " + ok.channels() + " channels, asked for " + channels);
        }
    }
}
