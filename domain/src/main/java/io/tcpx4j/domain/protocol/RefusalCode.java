package io.tcpx4j.domain.protocol;

import io.tcpx4j.api.TransferException.Code;

/**
 * Why a peer refused a connection or a transfer: the status field of REJECT, WRITE_ACK and READ_NACK.
 * The wire values are part of the protocol and never change; the error values follow the numbering of
 * {@link Code} (the same numbers NIXL uses, so frames of every protocol version read the same), but this
 * type, not a NIXL status, is what the engine reads and writes. {@link #NONE} in a WRITE_ACK means the
 * WRITE landed; {@link #DUPLICATE} in a REJECT means a crossing connection of the rejecting side wins.
 */
public enum RefusalCode {
    NONE(0, null),
    DUPLICATE(1, null),
    NOT_POSTED(-1, Code.NOT_POSTED),
    INVALID_PARAM(-2, Code.INVALID_PARAM),
    BACKEND(-3, Code.BACKEND),
    NOT_FOUND(-4, Code.NOT_FOUND),
    MISMATCH(-5, Code.MISMATCH),
    NOT_ALLOWED(-6, Code.NOT_ALLOWED),
    REPOST_ACTIVE(-7, Code.REPOST_ACTIVE),
    UNKNOWN(-8, Code.UNKNOWN),
    NOT_SUPPORTED(-9, Code.NOT_SUPPORTED),
    REMOTE_DISCONNECT(-10, Code.REMOTE_DISCONNECT),
    CANCELED(-11, Code.CANCELED);

    private final int wire;
    private final Code code;

    RefusalCode(int wire, Code code) {
        this.wire = wire;
        this.code = code;
    }

    /** The value in the frame. */
    public int wire() {
        return wire;
    }

    /** The error a refused transfer fails with; {@link Code#UNKNOWN} for {@link #NONE} and {@link #DUPLICATE}. */
    public Code code() {
        return code == null ? Code.UNKNOWN : code;
    }

    /** The refusal with wire value {@code wire}; {@link #UNKNOWN} for a value the protocol does not define. */
    public static RefusalCode ofWire(int wire) {
        for (RefusalCode r : values()) {
            if (r.wire == wire) {
                return r;
            }
        }
        return UNKNOWN;
    }

    /** The refusal that carries {@code code}. */
    public static RefusalCode of(Code code) {
        for (RefusalCode r : values()) {
            if (r.code == code) {
                return r;
            }
        }
        throw new IllegalArgumentException("no refusal for " + code);
    }
}
